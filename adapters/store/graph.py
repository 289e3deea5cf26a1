"""Writes of memory: data items, documents, chunks, entities, edges, summaries (forget: forget.py)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, String, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert

from engram.adapters.store.spans import refresh_spans
from engram.models.tables import (
    chunk_terms,
    chunk_windows,
    chunks,
    data_items,
    documents,
    edge_intervals,
    edges,
    entities,
    entity_types,
    summaries,
)
from engram.pipelines import ids
from engram.pipelines.cognify.windows import windows_of
from engram.pipelines.dates import years_named
from engram.pipelines.recall.lexical import postings

Vectors = dict[uuid.UUID, list[float]]

# On an edge upsert: the stored edge keeps its text, as it has a description or the new one has none.
_DESCRIBED_FIRST = ("(COALESCE(edges.properties->>'description', '') <> ''"
                    " OR COALESCE(excluded.properties->>'description', '') = '')")


def _by_id(row: Any) -> Any:
    """Rows upserted in one order by every loader: two loads of shared entities never deadlock."""
    return row.id


def _at(value: Any) -> Any:
    return None if value is None else value.at


def _precision(value: Any) -> str | None:
    return None if value is None else value.precision


_CONVERSATION_COLUMNS = ("occurred_at", "speakers", "dates", "conversation")


def _conversation_columns(chunk: dict[str, Any]) -> dict[str, Any]:
    """A conversation chunk's session time, speakers, resolved dates and turns; NULLs otherwise."""
    if not chunk.get("conversation"):
        return dict.fromkeys(_CONVERSATION_COLUMNS)
    occurred = chunk.get("occurred_at")
    return {"occurred_at": datetime.fromisoformat(occurred) if occurred else None,
            "speakers": list(chunk.get("speakers") or []), "dates": list(chunk.get("dates") or []),
            "conversation": chunk["conversation"]}


class GraphRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    # ------------------------------------------------------------ data items

    def add_item(
        self,
        dataset: uuid.UUID,
        digest: str,
        content: str,
        *,
        name: str | None,
        mime: str | None,
        source: str | None,
        node_sets: Sequence[str] = (),
        importance: float = 0.5,
    ) -> tuple[uuid.UUID, bool]:
        """Store raw content once per (dataset, hash). Returns (item id, created?)."""
        item = ids.data_item_id(dataset, digest)
        created = self.conn.execute(
            insert(data_items)
            .values(
                id=item,
                dataset_id=dataset,
                content_hash=digest,
                content=content,
                name=name,
                mime=mime,
                source=source,
                node_sets=list(node_sets),
                importance=importance,
            )
            .on_conflict_do_nothing()
            .returning(data_items.c.id)
        ).first()
        return item, created is not None

    def add_items(self, dataset: uuid.UUID, items: Sequence[dict[str, Any]], *, node_sets: Sequence[str] = (),
                  importance: float = 0.5) -> list[tuple[uuid.UUID, bool]]:
        """add_item for many items in one statement (an accept is one short transaction).

        `items` hold digest, content, name, mime, source. Returns (item id, created?) in order;
        of equal contents within the call only the first counts as created."""
        rows: dict[uuid.UUID, dict[str, Any]] = {}
        for it in items:
            rows.setdefault(ids.data_item_id(dataset, it["digest"]), {
                "dataset_id": dataset, "content_hash": it["digest"], "content": it["content"], "name": it.get("name"),
                "mime": it.get("mime"), "source": it.get("source"), "node_sets": list(node_sets),
                "importance": importance})
        created: set[uuid.UUID] = set()
        if rows:
            created = set(self.conn.execute(
                insert(data_items).values([{"id": k, **v} for k, v in rows.items()])
                .on_conflict_do_nothing().returning(data_items.c.id)).scalars())
        out: list[tuple[uuid.UUID, bool]] = []
        for it in items:
            item = ids.data_item_id(dataset, it["digest"])
            out.append((item, item in created))
            created.discard(item)
        return out

    def item(self, item: uuid.UUID) -> dict | None:
        row = self.conn.execute(select(data_items).where(data_items.c.id == item)).mappings().first()
        return dict(row) if row else None

    def find_items(self, dataset: uuid.UUID, *, name: str | None = None, id_prefix: str | None = None,
                   limit: int = 1000) -> list[dict]:
        """A dataset's items by document name, or by (a prefix of) their id: id, name, created_at."""
        query = select(data_items.c.id, data_items.c.name, data_items.c.created_at).where(
            data_items.c.dataset_id == dataset)
        if name is not None:
            query = query.where(data_items.c.name == name)
        if id_prefix is not None:
            query = query.where(func.cast(data_items.c.id, String).startswith(id_prefix, autoescape=True))
        rows = self.conn.execute(query.order_by(data_items.c.created_at, data_items.c.id).limit(limit)).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ the one-transaction load

    def load_document(
        self,
        *,
        dataset: uuid.UUID,
        item: uuid.UUID,
        document: uuid.UUID,
        doc_type: str,
        title: str | None,
        chunk_rows: Sequence[dict[str, Any]],
        draft: Any,
        vectors: Vectors,
    ) -> dict[str, int]:
        """Write a document's chunks, summaries, entities, types and edges (caller's transaction)."""
        self.conn.execute(
            insert(documents)
            .values(id=document, data_item_id=item, dataset_id=dataset, doc_type=doc_type, title=title)
            .on_conflict_do_update(index_elements=[documents.c.id], set_={"doc_type": doc_type, "title": title})
        )
        if chunk_rows:
            self._load_chunks(dataset, document, chunk_rows, vectors)
        if draft.entity_types:
            self._load_entity_types(dataset, draft.entity_types, vectors)
        upserted = self._entities_to_upsert(draft.entities)
        if upserted:
            self._load_entities(dataset, upserted, vectors)
        if draft.edges:
            self._load_edges(dataset, draft.edges, vectors)
        self._load_intervals(dataset, [c["id"] for c in chunk_rows], draft.edges)
        if draft.summaries:
            self._load_summaries(dataset, draft.summaries, vectors)
        return {
            "chunks": len(chunk_rows),
            "entities": len(draft.entities),
            "entity_types": len(draft.entity_types),
            "edges": len(draft.edges),
            "summaries": len(draft.summaries),
        }

    def _load_chunks(self, dataset: uuid.UUID, document: uuid.UUID, chunk_rows: Sequence[dict[str, Any]],
                     vectors: Vectors) -> None:
        """Upsert the chunks, then their postings and windows (in this order)."""
        lexical = {c["id"]: postings(c["text"]) for c in chunk_rows}
        stmt = insert(chunks).values(
            [
                {
                    "lex_length": lexical[c["id"]][1],
                    "years": years_named(c["text"]),
                    "id": c["id"],
                    "document_id": document,
                    "dataset_id": dataset,
                    "chunk_index": c["index"],
                    "text": c["text"],
                    "token_count": c["token_count"],
                    "cut_type": c["cut_type"],
                    "embedding": vectors.get(c["id"]),
                    "importance": c.get("importance", 0.5),
                    **_conversation_columns(c),
                }
                for c in chunk_rows
            ]
        )
        self.conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[chunks.c.id],
                set_={"text": stmt.excluded.text, "embedding": stmt.excluded.embedding,
                      "token_count": stmt.excluded.token_count, "cut_type": stmt.excluded.cut_type,
                      "lex_length": stmt.excluded.lex_length, "years": stmt.excluded.years,
                      **{c: stmt.excluded[c] for c in _CONVERSATION_COLUMNS}},
            )
        )
        self._write_postings(dataset, lexical)
        self._write_windows(dataset, document, chunk_rows, vectors)

    def _load_entity_types(self, dataset: uuid.UUID, drafted: Sequence[Any], vectors: Vectors) -> None:
        stmt = insert(entity_types).values(
            [{"id": t.id, "dataset_id": dataset, "name": ids.normalise_name(t.name),
              "embedding": vectors.get(t.id)} for t in sorted(drafted, key=_by_id)]
        )
        self.conn.execute(stmt.on_conflict_do_nothing())

    def _load_entities(self, dataset: uuid.UUID, upserted: Sequence[Any], vectors: Vectors) -> None:
        stmt = insert(entities).values(
            [
                {
                    "id": e.id,
                    "dataset_id": dataset,
                    "name": ids.normalise_name(e.name),
                    "display_name": e.name,
                    "type_id": e.type_id,
                    "description": e.description or "",
                    "embedding": vectors.get(e.id),
                }
                for e in upserted
            ]
        )
        # The same entity from another document is one node: keep the first description.
        self.conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[entities.c.id],
                set_={
                    "description": func.coalesce(func.nullif(entities.c.description, ""), stmt.excluded.description),
                    "embedding": func.coalesce(entities.c.embedding, stmt.excluded.embedding),
                },
            )
        )

    def _load_edges(self, dataset: uuid.UUID, drafted: Sequence[Any], vectors: Vectors) -> None:
        stmt = insert(edges).values(
            [
                {
                    "id": e.id,
                    "dataset_id": dataset,
                    "source_id": e.source_id,
                    "target_id": e.target_id,
                    "relationship": e.relationship,
                    "properties": e.properties or {},
                    "edge_text": e.edge_text,
                    "embedding": vectors.get(e.id),
                    "provenance": list(e.provenance),
                }
                for e in sorted(drafted, key=_by_id)
            ]
        )
        # An existing identity is updated, never duplicated: provenance grows. Its description
        # merges as within a document (pipelines/cognify/extract): the first non-empty one
        # wins, and the text (and its vector) follow it.
        self.conn.execute(
            stmt.on_conflict_do_update(
                constraint="uq_edges_identity",
                set_={
                    "provenance": text(
                        "ARRAY(SELECT DISTINCT unnest(edges.provenance || excluded.provenance))"
                    ),
                    "edge_text": text(f"CASE WHEN {_DESCRIBED_FIRST} THEN edges.edge_text"
                                      " ELSE excluded.edge_text END"),
                    "embedding": text(f"CASE WHEN {_DESCRIBED_FIRST} THEN COALESCE(edges.embedding,"
                                      " excluded.embedding) ELSE excluded.embedding END"),
                    "properties": stmt.excluded.properties.op("||")(edges.c.properties),
                    "updated_at": func.now(),
                },
            )
        )

    def _load_summaries(self, dataset: uuid.UUID, drafted: Sequence[Any], vectors: Vectors) -> None:
        stmt = insert(summaries).values(
            [{"id": s.id, "chunk_id": s.chunk_id, "dataset_id": dataset, "text": s.text,
              "embedding": vectors.get(s.id)} for s in drafted]
        )
        self.conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[summaries.c.id],
                set_={"text": stmt.excluded.text, "embedding": stmt.excluded.embedding},
            )
        )

    def _entities_to_upsert(self, drafted: Sequence[Any]) -> list[Any]:
        """The drafted entities whose upsert changes something, in id order.

        An entity already stored with a description and a vector keeps both (the first document
        to describe it wins), so upserting it again changes nothing, yet ON CONFLICT DO UPDATE
        would lock its row until this load commits: every load naming a popular entity would wait
        for the one before it. Such entities are only locked FOR KEY SHARE here (no load waits on
        another; a forget deleting the entity waits for this load, whose edges point at it)."""
        drafted = sorted(drafted, key=_by_id)
        if not drafted:
            return []
        complete = set(self.conn.execute(
            select(entities.c.id)
            .where(entities.c.id.in_([e.id for e in drafted]), entities.c.description != "",
                   entities.c.embedding.is_not(None))
            .with_for_update(read=True, key_share=True)  # FOR KEY SHARE
        ).scalars())
        return [e for e in drafted if e.id not in complete]

    def _load_intervals(self, dataset: uuid.UUID, chunk_ids: list[uuid.UUID], draft_edges: Sequence[Any]) -> None:
        """Each statement of a fact is one interval row. A reloaded chunk's rows are replaced:
        an unchanged statement keeps its row (and what supersession computed for it). Spans of
        unjudged rows are then recomputed over each touched edge (adapters/store/spans.py)."""
        rows = [
            {
                "id": i.id, "edge_id": e.id, "dataset_id": dataset, "chunk_id": i.chunk_id,
                "valid_from": _at(i.stated.valid_from), "valid_from_precision": _precision(i.stated.valid_from),
                "valid_to": _at(i.stated.valid_to), "valid_to_precision": _precision(i.stated.valid_to),
                "ended": i.stated.ended,
                "asserted_at": _at(i.stated.asserted), "asserted_precision": _precision(i.stated.asserted),
                "starts_at": _at(i.stated.valid_from or i.stated.asserted), "ends_at": _at(i.stated.valid_to),
            }
            for e in draft_edges for i in getattr(e, "intervals", ())
        ]
        touched = {r["edge_id"] for r in rows}
        if chunk_ids:
            touched |= set(self.conn.execute(delete(edge_intervals).where(
                edge_intervals.c.chunk_id.in_(chunk_ids), edge_intervals.c.id.not_in([r["id"] for r in rows]))
                .returning(edge_intervals.c.edge_id)).scalars())
        if not rows:
            refresh_spans(self.conn, touched)
            return
        stmt = insert(edge_intervals).values(rows)
        stated = ("valid_from", "valid_from_precision", "valid_to", "valid_to_precision", "ended", "asserted_at",
                  "asserted_precision")
        changed = None
        for column in stated:
            clause = edge_intervals.c[column].is_distinct_from(stmt.excluded[column])
            changed = clause if changed is None else changed | clause
        self.conn.execute(stmt.on_conflict_do_update(
            index_elements=[edge_intervals.c.id],
            set_={**{c: stmt.excluded[c] for c in stated}, "starts_at": stmt.excluded.starts_at,
                  "ends_at": stmt.excluded.ends_at, "superseded_by": None},
            where=changed,
        ))
        # An end stated alone ("resigned in 2017") closes the edge's open statements.
        refresh_spans(self.conn, touched)

    def _write_windows(self, dataset: uuid.UUID, document: uuid.UUID, chunk_rows: Sequence[dict[str, Any]],
                       vectors: Vectors) -> None:
        """A conversation chunk's turn windows with their vectors (none for other chunks)."""
        rows = [{"id": w.id, "chunk_id": w.chunk_id, "dataset_id": dataset, "document_id": document,
                 "width": w.width, "start": w.start, "embedding": vectors.get(w.id)}
                for w in windows_of(chunk_rows)]
        if rows:
            stmt = insert(chunk_windows).values(rows)
            self.conn.execute(stmt.on_conflict_do_update(index_elements=[chunk_windows.c.id],
                                                         set_={"embedding": stmt.excluded.embedding}))

    def _write_postings(self, dataset: uuid.UUID, lexical: dict[uuid.UUID, tuple[dict[str, int], int]]) -> None:
        """BM25 postings of the chunks, replacing any earlier ones (a reload is harmless)."""
        self.conn.execute(delete(chunk_terms).where(chunk_terms.c.chunk_id.in_(list(lexical))))
        rows = [{"dataset_id": dataset, "term": term, "chunk_id": chunk, "tf": tf, "dl": length}
                for chunk, (counts, length) in lexical.items() for term, tf in counts.items()]
        for start in range(0, len(rows), 5000):  # bound the statement size for long documents
            self.conn.execute(insert(chunk_terms), rows[start:start + 5000])

    def counts(self, dataset: uuid.UUID | None = None) -> dict[str, int]:
        out = {}
        for name, table in (("data_items", data_items), ("documents", documents), ("chunks", chunks),
                            ("entities", entities), ("entity_types", entity_types), ("edges", edges),
                            ("summaries", summaries)):
            query = select(func.count()).select_from(table)
            if dataset is not None:
                query = query.where(table.c.dataset_id == dataset)
            out[name] = self.conn.execute(query).scalar_one()
        return out
