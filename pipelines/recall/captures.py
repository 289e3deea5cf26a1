"""Captured knowledge objects in recall (SPEC 9): the CAPTURES lane (filtered by type,
project and tags) and the object, with its type and edges, attached to any chunk or summary
item that is a captured object's text."""

from __future__ import annotations

from engram.models.payloads import CapturedObject, Provenance, RecallItem
from engram.pipelines.recall.context import RecallContext, similarity


def captured(row: dict) -> CapturedObject:
    return CapturedObject(id=row["id"], type=row["obj_type"], title=row["title"], project=row["project"],
                          tags=list(row["tags"] or []), summary=row["summary"], confidence=row["confidence"],
                          tier=row["tier"], stage=row["stage"], edges=row["edges"])


def captures(ctx: RecallContext) -> list[RecallItem]:
    f = ctx.filters
    rows = ctx.search.captures(ctx.datasets, ctx.vector(), types=f.get("types") or (), project=f.get("project"),
                               tags=f.get("tags") or (), limit=ctx.top_k)
    objects = ctx.search.captured_objects([r["id"] for r in rows])
    return [
        RecallItem(kind="capture", text=r["text"], score=similarity(r["distance"]), capture=captured(objects[r["id"]]),
                   provenance=Provenance(dataset=ctx.scope.name(r["dataset_id"]), document_id=r["document_id"],
                                         data_item_id=r["id"], title=r["title"], chunk_ids=[r["chunk_id"]]))
        for r in rows if r["id"] in objects
    ]


def attach(items: list[RecallItem], search) -> list[RecallItem]:
    """Chunk and summary items of captured objects carry the object (type, edges)."""
    reader = getattr(search, "captured_objects", None)
    wanted = {i.provenance.data_item_id for i in items if i.kind in ("chunk", "summary") and i.provenance.data_item_id}
    if reader is None or not wanted:
        return items
    objects = reader(list(wanted))
    for item in items:
        row = objects.get(item.provenance.data_item_id) if item.kind in ("chunk", "summary") else None
        if row is not None:
            item.capture = captured(row)
    return items
