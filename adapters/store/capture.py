"""Captured knowledge objects (SPEC 9) in the one graph: each object is a data item whose
text is a chunk (recall finds it), a node in `entities` (graph lanes see its edges) and a
capture_objects row (type, project, tags, tier), with the caller's request kept beside it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, select, text, update
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import (
    capture_objects,
    capture_requests,
    chunks,
    data_items,
    documents,
    edges,
    entities,
    entity_types,
    summaries,
)
from engram.pipelines import ids
from engram.pipelines.facts import CONTRADICTS

Vectors = dict[Any, list[float]]
REASONED = (CONTRADICTS, "caused_by", "led_to", "supersedes")  # relationships the reasoner reads


def object_chunk(object_id: uuid.UUID) -> uuid.UUID:
    return ids.chunk_id(ids.document_id(object_id), 0)


class CaptureRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    # ------------------------------------------------------------ admission

    def admit(self, dataset: uuid.UUID, draft, *, captured_by: str) -> tuple[uuid.UUID, bool]:
        """Store the object (item, document, chunk, node, row, request) once per identity."""
        object_id = ids.data_item_id(dataset, draft.digest)
        created = self.conn.execute(
            insert(data_items).values(id=object_id, dataset_id=dataset, content_hash=draft.digest, content=draft.text,
                                      name=draft.title, mime="text/markdown", source=f"capture:{draft.type}")
            .on_conflict_do_nothing().returning(data_items.c.id)
        ).first() is not None
        if not created:
            return object_id, False
        document = ids.document_id(object_id)
        self.conn.execute(insert(documents).values(id=document, data_item_id=object_id, dataset_id=dataset,
                                                   doc_type="capture", title=draft.title))
        self.conn.execute(insert(chunks).values(
            id=object_chunk(object_id), document_id=document, dataset_id=dataset, chunk_index=0, text=draft.text,
            token_count=len(draft.text.split()), cut_type="capture"))
        type_id = self._entity_type(dataset, draft.type)
        self.conn.execute(insert(entities).values(id=object_id, dataset_id=dataset, name=ids.normalise_name(draft.title),
                                                  display_name=draft.title, type_id=type_id))
        self.conn.execute(insert(capture_objects).values(
            id=object_id, dataset_id=dataset, title=draft.title, obj_type=draft.type, project=draft.project,
            tags=draft.tags, properties=draft.properties, captured_by=captured_by))
        self.conn.execute(insert(capture_requests).values(object_id=object_id, request=draft.request()))
        return object_id, True

    def set_run(self, object_id: uuid.UUID, run_id: uuid.UUID) -> None:
        self.conn.execute(update(capture_objects).where(capture_objects.c.id == object_id).values(run_id=run_id))

    def _entity_type(self, dataset: uuid.UUID, name: str) -> uuid.UUID:
        type_id = ids.entity_type_id(dataset, name)
        self.conn.execute(insert(entity_types).values(id=type_id, dataset_id=dataset, name=ids.normalise_name(name))
                          .on_conflict_do_nothing())
        return type_id

    # ------------------------------------------------------------ reads

    def get(self, object_id: uuid.UUID) -> dict | None:
        row = self.conn.execute(
            select(capture_objects, data_items.c.content.label("text"), capture_requests.c.request)
            .join(data_items, data_items.c.id == capture_objects.c.id)
            .join(capture_requests, capture_requests.c.object_id == capture_objects.c.id, isouter=True)
            .where(capture_objects.c.id == object_id)
        ).mappings().first()
        if row is None:
            return None
        out = dict(row)
        out["type"] = out["obj_type"]
        out["content"] = out["text"].split("\n\n", 1)[1] if "\n\n" in out["text"] else ""
        return out

    def recent(self, dataset: uuid.UUID, exclude: uuid.UUID, limit: int) -> list[dict]:
        rows = self.conn.execute(
            select(capture_objects.c.id, capture_objects.c.obj_type.label("type"), capture_objects.c.title)
            .where(capture_objects.c.dataset_id == dataset, capture_objects.c.id != exclude)
            .order_by(capture_objects.c.created_at.desc(), capture_objects.c.id).limit(limit)
        ).mappings()
        return [dict(r) for r in rows]

    def edges_of(self, object_id: uuid.UUID) -> list[dict]:
        rows = self.conn.execute(
            select(edges.c.id, edges.c.source_id, edges.c.target_id, edges.c.relationship, edges.c.properties)
            .where((edges.c.source_id == object_id) | (edges.c.target_id == object_id))
        ).mappings()
        return [dict(r) for r in rows]

    def superseded(self, dataset: uuid.UUID) -> set[uuid.UUID]:
        return set(self.conn.execute(
            select(edges.c.target_id).join(capture_objects, capture_objects.c.id == edges.c.target_id)
            .where(edges.c.dataset_id == dataset, edges.c.relationship == "supersedes")).scalars())

    def reasoning_edges(self, dataset: uuid.UUID) -> list[dict]:
        """Edges between capture objects that the reasoner's rules read."""
        rows = self.conn.execute(text(
            "SELECT g.id, g.source_id, g.target_id, g.relationship, g.provenance FROM edges g"
            " JOIN capture_objects s ON s.id = g.source_id JOIN capture_objects t ON t.id = g.target_id"
            " WHERE g.dataset_id = :d AND g.relationship = ANY(:r)"), {"d": dataset, "r": list(REASONED)}).mappings()
        return [dict(r) for r in rows]

    def titles(self, object_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
        rows = self.conn.execute(select(capture_objects.c.id, capture_objects.c.title)
                                 .where(capture_objects.c.id.in_(list(object_ids))))
        return {r[0]: r[1] for r in rows}

    # ------------------------------------------------------------ stage writes

    def apply_normalize(self, obj: dict, result: dict, vectors: Vectors) -> None:
        object_id, dataset = obj["id"], obj["dataset_id"]
        chunk = object_chunk(object_id)
        self.conn.execute(update(capture_objects).where(capture_objects.c.id == object_id).values(
            obj_type=result["type"], summary=result["summary"], confidence=result["confidence"], tags=result["tags"],
            project=result["project"], properties=result["properties"], stage="normalized", updated_at=func.now()))
        self.conn.execute(update(chunks).where(chunks.c.id == chunk).values(embedding=vectors.get("chunk")))
        self.conn.execute(update(entities).where(entities.c.id == object_id).values(
            description=result["summary"], embedding=vectors.get("title"),
            type_id=self._entity_type(dataset, result["type"])))
        stmt = insert(summaries).values(id=ids.summary_id(chunk), chunk_id=chunk, dataset_id=dataset,
                                        text=result["summary"], embedding=vectors.get("summary"))
        self.conn.execute(stmt.on_conflict_do_update(
            index_elements=[summaries.c.id], set_={"text": stmt.excluded.text, "embedding": stmt.excluded.embedding}))

    def apply_link(self, obj: dict, nodes: list[dict], new_edges: list[dict], vectors: Vectors) -> None:
        dataset = obj["dataset_id"]
        for node in nodes:
            type_id = self._entity_type(dataset, node["type"])
            stmt = insert(entities).values(id=node["id"], dataset_id=dataset, name=ids.normalise_name(node["name"]),
                                           display_name=node["name"], type_id=type_id,
                                           embedding=vectors.get(node["id"]))
            # The same entity from a document or another capture is one node: keep what it has.
            self.conn.execute(stmt.on_conflict_do_update(
                index_elements=[entities.c.id],
                set_={"embedding": func.coalesce(entities.c.embedding, stmt.excluded.embedding)}))
        self.upsert_edges(dataset, new_edges, [object_chunk(obj["id"])], vectors)
        self._stage(obj["id"], "linked")

    def upsert_edges(self, dataset: uuid.UUID, rows: list[dict], provenance: list[uuid.UUID], vectors: Vectors,
                     *, keep_existing: bool = False) -> None:
        if not rows:
            return
        stmt = insert(edges).values([
            {"id": e["id"], "dataset_id": dataset, "source_id": e["source_id"], "target_id": e["target_id"],
             "relationship": e["relationship"], "properties": e["properties"], "edge_text": e["edge_text"],
             "embedding": vectors.get(e["id"]), "provenance": e.get("provenance", provenance)} for e in rows])
        if keep_existing:  # an inferred edge never overwrites one already there
            self.conn.execute(stmt.on_conflict_do_nothing(constraint="uq_edges_identity"))
            return
        self.conn.execute(stmt.on_conflict_do_update(constraint="uq_edges_identity", set_={
            "provenance": text("ARRAY(SELECT DISTINCT unnest(edges.provenance || excluded.provenance))"),
            "edge_text": stmt.excluded.edge_text, "embedding": stmt.excluded.embedding,
            "properties": edges.c.properties.op("||")(stmt.excluded.properties), "updated_at": func.now()}))

    def apply_enrich(self, object_id: uuid.UUID, result: dict) -> None:
        self.conn.execute(update(capture_objects).where(capture_objects.c.id == object_id).values(
            tier=result["tier"], connection_count=result["connection_count"], staleness=result["staleness"],
            stage="enriched", updated_at=func.now()))

    def mark_reasoned(self, object_id: uuid.UUID) -> None:
        self._stage(object_id, "reasoned")

    def _stage(self, object_id: uuid.UUID, stage: str) -> None:
        self.conn.execute(update(capture_objects).where(capture_objects.c.id == object_id)
                          .values(stage=stage, updated_at=func.now()))

    # ------------------------------------------------------------ forget

    def forget(self, item_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
        """Before items go: their objects' nodes, every edge touching them, and inferences drawn
        from them (an inferred edge carries its premises' chunks in its provenance). Their rows
        and requests follow the data items (cascade); their runs are tombstoned with the rest.
        Returns the removed edges' ids."""
        objects = list(self.conn.execute(select(capture_objects.c.id).where(capture_objects.c.id.in_(list(item_ids))))
                       .scalars())
        if not objects:
            return []
        chunk_ids = [object_chunk(o) for o in objects]
        removed = list(self.conn.execute(text(
            "DELETE FROM edges WHERE source_id = ANY(:o) OR target_id = ANY(:o)"
            " OR (properties->>'origin' = 'reasoner' AND provenance && CAST(:c AS uuid[])) RETURNING id"),
            {"o": objects, "c": chunk_ids}).scalars())
        self.conn.execute(entities.delete().where(entities.c.id.in_(objects)))
        return removed


class CaptureReads:
    """Recall's reads of captured objects (mixed into the SearchRepository, dataset-scoped)."""

    conn: Connection

    def captures(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], *, types: Sequence[str] = (),
                 project: str | None = None, tags: Sequence[str] = (), limit: int = 10) -> list[dict]:
        """Objects matching every filter (any of the types, the project, all the tags), nearest
        to the question first; objects not yet embedded follow, newest first."""
        where = ["o.dataset_id = ANY(:ds)"]
        params: dict[str, Any] = {"ds": list(datasets), "k": limit,
                                  "v": "[" + ",".join(repr(float(x)) for x in vector) + "]"}
        if types:
            where.append("o.obj_type = ANY(:types)")
            params["types"] = list(types)
        if project:
            where.append("lower(o.project) = lower(:project)")
            params["project"] = project
        if tags:
            where.append("o.tags @> CAST(:tags AS text[])")
            params["tags"] = list(tags)
        rows = self.conn.execute(text(
            "SELECT o.id, o.dataset_id, o.title, c.id AS chunk_id, c.document_id, c.text,"
            " c.embedding <=> CAST(:v AS vector) AS distance"
            " FROM capture_objects o JOIN documents d ON d.data_item_id = o.id"
            " JOIN chunks c ON c.document_id = d.id AND c.chunk_index = 0"
            f" WHERE {' AND '.join(where)}"
            " ORDER BY distance NULLS LAST, o.created_at DESC, o.id LIMIT :k"), params).mappings()
        return [dict(r) for r in rows]

    def captured_objects(self, object_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict]:
        """Objects by id with every edge touching them (the other end's name, origin, rule)."""
        if not object_ids:
            return {}
        objects = {r["id"]: dict(r, edges=[]) for r in self.conn.execute(
            select(capture_objects).where(capture_objects.c.id.in_(list(object_ids)))).mappings()}
        if not objects:
            return {}
        rows = self.conn.execute(text(
            "SELECT g.source_id, g.target_id, g.relationship, g.properties, s.display_name AS source_name,"
            " t.display_name AS target_name FROM edges g"
            " LEFT JOIN entities s ON s.id = g.source_id LEFT JOIN entities t ON t.id = g.target_id"
            " WHERE g.source_id = ANY(:o) OR g.target_id = ANY(:o)"
            " ORDER BY g.relationship, g.source_id, g.target_id"), {"o": list(objects)}).mappings()
        for r in rows:
            for end, other, name, direction in (("source_id", "target_id", "target_name", "out"),
                                                ("target_id", "source_id", "source_name", "in")):
                if r[end] in objects:
                    props = r["properties"] or {}
                    objects[r[end]]["edges"].append({
                        "predicate": props.get("predicate") or r["relationship"], "direction": direction,
                        "other_id": r[other], "other_name": r[name], "origin": props.get("origin"),
                        "confidence": props.get("confidence"), "rule": (props.get("provenance") or {}).get("rule")})
        return objects
