"""What an ingest run reads back from the deployment (bench/ingest.py): per-stretch stage costs
from the runs' rows, the dataset's own vector indexes, texts embedded and vectors stored."""

from __future__ import annotations


def interval_costs(run_ids, reached: list[tuple[int, float]]) -> list[dict]:
    """Per stretch between checkpoints (runs in the order they finished): documents/s in that
    stretch and each stage's mean task seconds, so a cost that grows with the dataset shows as
    a rising stage time, apart from the pipeline filling up at the start."""
    from sqlalchemy import text

    from engram.adapters.store import Store
    from engram.pipelines.cognify.flow import ADD

    with Store().unit_of_work() as uow:
        rows = uow.conn.execute(text(
            "WITH r AS (SELECT id, row_number() OVER (ORDER BY finished_at) AS n FROM pipeline_runs WHERE id = ANY(:r))"
            " SELECT r.n, s.stage, extract(epoch FROM s.finished_at - s.started_at)"
            " FROM r JOIN stage_runs s ON s.run_id = r.id"
            " WHERE s.status = 'completed' AND s.started_at IS NOT NULL AND s.finished_at IS NOT NULL"),
            {"r": run_ids}).all()
    out, low, before = [], 0, 0.0
    for mark, at in reached:
        stages: dict[str, list[float]] = {}
        for n, stage, seconds in rows:
            if low < n <= mark:
                stages.setdefault(stage, []).append(float(seconds))
        out.append({"docs": f"{low + 1}-{mark}", "docs_per_s": round((mark - low) / max(1e-9, at - before), 3),
                    "stage_mean_s": {k: round(sum(v) / len(v), 3) for k, v in stages.items() if k != ADD.name}})
        low, before = mark, at
    return out


def own_indexes(dataset_name: str) -> list[str]:
    """The vector tables on which the run's dataset has its own HNSW index (valid) at the end."""
    from sqlalchemy import text

    from engram.adapters.store import Store
    from engram.adapters.store.vector_indexes import VECTOR_TABLES, index_name

    store = Store()
    with store.unit_of_work() as uow:
        ids = uow.conn.execute(text("SELECT id FROM datasets WHERE name = :n"), {"n": dataset_name}).scalars().all()
    present = store.vector_indexes().present()
    return sorted({t for t in VECTOR_TABLES for d in ids if present.get(index_name(t, d))})


def embedded_counter() -> int:
    """Texts the fleet embedded so far (batch tasks and embed_and_load count into Redis)."""
    from engram.adapters.redis_client import get_redis
    from engram.settings import get_settings
    from engram.tasks.embedding import EMBEDDED_KEY

    return int(get_redis().get(EMBEDDED_KEY + get_settings().embedding_model) or 0)


def stored_vectors() -> int:
    from engram.adapters.store import Store

    with Store().unit_of_work() as uow:
        return uow.embeddings.counts()["vectors"]


def stored_keys(keys, settings) -> int:
    from engram.adapters.store import Store

    with Store().unit_of_work() as uow:
        return len(uow.embeddings.lookup(settings.embedding_model, settings.embedding_dimension, list(keys)))
