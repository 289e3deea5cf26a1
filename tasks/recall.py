"""engram.recall: authorise every dataset first, then retrieve through the recall lanes."""

from __future__ import annotations

from engram.adapters.embed import get_embedder
from engram.adapters.store import Store
from engram.models.payloads import RecallRequest, RecallResult
from engram.pipelines.recall import lanes
from engram.settings import get_settings
from engram.tasks.base import engram_task


def recall_query(req: RecallRequest) -> RecallResult:
    """Library form of engram.recall (the task calls this)."""
    settings = get_settings()
    with Store().unit_of_work() as uow:
        if not req.datasets:
            raise ValueError("give at least one dataset to recall from")
        datasets = [uow.access.authorise(name, req.user, "read") for name in req.datasets]
        names = dict(zip(datasets, req.datasets))
        embedder = get_embedder(settings)
        search_type = (req.search_type or "CHUNKS").upper()
        if search_type == "CHUNKS":
            items = lanes.chunk_items(uow.search, embedder, datasets, names, req.question, req.top_k)
        elif search_type in ("TRIPLET_COMPLETION", "GRAPH_COMPLETION"):
            items = lanes.triplet_items(uow.search, embedder, datasets, names, req.question, req.top_k)
        else:
            raise ValueError(f"unsupported search_type {req.search_type!r}")
    return RecallResult(question=req.question, search_type=search_type, items=items)


@engram_task("engram.recall", payload=RecallRequest)
def recall(self, req: RecallRequest) -> dict:
    return recall_query(req).model_dump(mode="json")
