"""Shared by the time-aware fact tests (offline and replayed extraction): remember documents in
order, read the facts and intervals back, and ask recall in every lane."""

from __future__ import annotations

from sqlalchemy import text

MAYOR = {"mayor_of": "target"}
EVERY_LANE = ["CHUNKS", "CHUNKS_LEXICAL", "SUMMARIES", "RAG_COMPLETION", "HYBRID_COMPLETION", "GRAPH_COMPLETION",
              "GRAPH_COMPLETION_COT", "GRAPH_COMPLETION_CONTEXT_EXTENSION", "GRAPH_SUMMARY_COMPLETION",
              "TRIPLET_COMPLETION", "TEMPORAL", None]


def remember_in_order(client, dataset: str, docs, functional: dict) -> None:
    """One document at a time, each with its passes finished, in the order given."""
    for doc in docs:
        [status] = client.remember(doc, dataset=dataset, options={"functional_relationships": functional},
                                   background=False, timeout=300)
        assert status.status == "completed" and status.error is None, status
        stage = next(s for s in status.stages if s.stage == "temporal_supersession")
        assert stage.status == "completed", stage


def facts(store, dataset: str, relationship: str) -> dict[str, dict]:
    """The dataset's `relationship` edges by source name (display), with their interval rows."""
    with store.unit_of_work() as uow:
        edges = uow.conn.execute(text(
            "SELECT g.id, g.superseded, g.superseded_by, g.supersession_reason, g.valid_from, g.valid_to,"
            " s.display_name AS source, t.display_name AS target, b.display_name AS superseded_by_source"
            " FROM edges g JOIN datasets d ON d.id = g.dataset_id"
            " JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
            " LEFT JOIN edges n ON n.id = g.superseded_by LEFT JOIN entities b ON b.id = n.source_id"
            " WHERE d.name = :d AND g.relationship = :r"), {"d": dataset, "r": relationship}).mappings().all()
        out = {e["source"]: dict(e, intervals=[]) for e in edges}
        rows = uow.conn.execute(text(
            "SELECT i.*, s.display_name AS source, c.text AS chunk_text FROM edge_intervals i"
            " JOIN edges g ON g.id = i.edge_id JOIN entities s ON s.id = g.source_id"
            " LEFT JOIN chunks c ON c.id = i.chunk_id"
            " WHERE g.id = ANY(:ids) ORDER BY i.starts_at, i.id"), {"ids": [e["id"] for e in edges]}).mappings()
        for r in rows:
            out[r["source"]]["intervals"].append(dict(r))
        return out


def outcome(store, dataset: str, relationship: str) -> list[tuple]:
    """What supersession decided, without ids or ingestion times: comparable across datasets."""
    rows = []
    for source, e in sorted(facts(store, dataset, relationship).items()):
        rows.append((source, e["superseded"], e["superseded_by_source"], e["valid_from"], e["valid_to"],
                     tuple(sorted((i["chunk_text"], i["starts_at"], i["ends_at"], i["superseded_by"] is not None)
                                  for i in e["intervals"]))))
    return rows


def recall(client, dataset: str, question: str, search_type: str | None, **kw):
    return client.recall(question, datasets=[dataset], search_type=search_type, top_k=10, **kw)


def context(result) -> list:
    return [i for i in result.items if i.kind != "answer"]


def triplet_texts(client, dataset: str, question: str, **kw) -> list[str]:
    result = recall(client, dataset, question, "TRIPLET_COMPLETION", **kw)
    return [i.text for i in result.items if i.kind == "triplet"]


def whole_dataset_rows(store, dataset: str) -> list[dict]:
    """Every edge and interval column a rerun must leave alone."""
    with store.unit_of_work() as uow:
        edges = uow.conn.execute(text(
            "SELECT g.id, g.properties, g.updated_at, g.valid_from, g.valid_to, g.superseded, g.superseded_by,"
            " g.supersession_reason FROM edges g JOIN datasets d ON d.id = g.dataset_id WHERE d.name = :d"
            " ORDER BY g.id"), {"d": dataset}).mappings().all()
        intervals = uow.conn.execute(text(
            "SELECT i.* FROM edge_intervals i JOIN datasets d ON d.id = i.dataset_id WHERE d.name = :d ORDER BY i.id"),
            {"d": dataset}).mappings().all()
        return [dict(r) for r in edges] + [dict(r) for r in intervals]
