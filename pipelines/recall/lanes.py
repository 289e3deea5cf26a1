"""Recall lanes over ports (search repository, embedder, LLM gateway). No Celery, no SQL."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from engram.models.payloads import Provenance, RecallItem


def chunk_items(search, embedder, datasets: Sequence[uuid.UUID], names: dict, question: str, top_k: int) -> list[RecallItem]:
    vector = embedder.embed([question])[0]
    rows = search.chunks_by_vector(datasets, vector, top_k)
    return [
        RecallItem(
            kind="chunk",
            text=r["text"],
            score=round(1.0 - float(r["distance"]), 6),
            provenance=Provenance(dataset=names.get(r["dataset_id"]), document_id=r["document_id"],
                                  data_item_id=r["data_item_id"], title=r["title"], chunk_ids=[r["id"]]),
        )
        for r in rows
    ]


def triplet_items(search, embedder, datasets: Sequence[uuid.UUID], names: dict, question: str, top_k: int) -> list[RecallItem]:
    """Triplets found through edge-text and entity vectors, expanded to the depth-1 neighbourhood."""
    vector = embedder.embed([question])[0]
    edge_hits = search.edges_by_vector(datasets, vector, top_k)
    entity_hits = search.entities_by_vector(datasets, vector, max(3, top_k // 2))
    edge_score = {h["id"]: 1.0 - float(h["distance"]) for h in edge_hits}
    entity_score = {h["id"]: 1.0 - float(h["distance"]) for h in entity_hits}
    rows = search.triplets(datasets, edge_ids=list(edge_score), entity_ids=list(entity_score), limit=top_k * 10)
    items = []
    for r in rows:
        score = edge_score.get(r["id"]) or 0.8 * max(entity_score.get(r["source_id"], 0.0),
                                                     entity_score.get(r["target_id"], 0.0))
        items.append(
            RecallItem(
                kind="triplet",
                text=f"{r['source_name']} {r['relationship'].replace('_', ' ')} {r['target_name']}",
                score=round(score, 6),
                superseded=bool(r["superseded"]),
                provenance=Provenance(dataset=names.get(r["dataset_id"]), chunk_ids=list(r["provenance"]),
                                      edge_ids=[r["id"]]),
            )
        )
    items.sort(key=lambda i: (-i.score, i.text))
    return items[:top_k]
