"""Browsing reads (engram.read / list / entity / graph / datasets): one dataset at a time, the
caller authorised first by the task. Rows come back plain; pipelines/browse.py shapes them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

from engram.adapters.store.search_sql import CONFLICT, facts_only

_FACT = facts_only()
_EDGE_COLUMNS = (
    "g.id, g.source_id, g.target_id, g.relationship, g.properties, g.edge_text, g.provenance, g.valid_from,"
    " g.valid_to, g.superseded, g.superseded_by, g.supersession_reason, g.created_at,"
    " s.display_name AS source_name, t.display_name AS target_name"
)
_EDGE_FROM = " FROM edges g LEFT JOIN entities s ON s.id = g.source_id LEFT JOIN entities t ON t.id = g.target_id"


class BrowseRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    # ------------------------------------------------------------ datasets

    def datasets(self, user_id: uuid.UUID) -> list[dict]:
        """Every dataset the user holds any grant on: owner, grants and what it holds."""
        rows = self.conn.execute(text(
            "SELECT d.id, d.name, u.name AS owner, d.owner_id = :u AS own, array_agg(DISTINCT g.permission) AS permissions,"
            " (SELECT count(*) FROM data_items i WHERE i.dataset_id = d.id"
            "  AND NOT EXISTS (SELECT 1 FROM capture_objects o WHERE o.id = i.id)) AS documents,"
            " (SELECT count(*) FROM capture_objects o WHERE o.dataset_id = d.id) AS objects,"
            " (SELECT count(*) FROM entities e WHERE e.dataset_id = d.id) AS entities,"
            f" (SELECT count(*) FROM edges g WHERE g.dataset_id = d.id AND {_FACT}) AS facts"
            " FROM datasets d JOIN users u ON u.id = d.owner_id JOIN dataset_grants g ON g.dataset_id = d.id"
            " WHERE g.principal = :p GROUP BY d.id, d.name, u.name ORDER BY NOT (d.owner_id = :u), d.name, u.name"),
            {"u": user_id, "p": f"user:{user_id}"}).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ items

    def item(self, dataset: uuid.UUID, item_id: uuid.UUID) -> dict | None:
        """A data item of the dataset with its document and, for a captured object, its row."""
        row = self.conn.execute(text(
            "SELECT i.id, i.name, i.content, i.node_sets, i.created_at, d.id AS document_id, d.doc_type, d.title,"
            " o.id AS object_id FROM data_items i LEFT JOIN documents d ON d.data_item_id = i.id"
            " LEFT JOIN capture_objects o ON o.id = i.id WHERE i.id = :i AND i.dataset_id = :d"),
            {"i": item_id, "d": dataset}).mappings().first()
        return dict(row) if row else None

    def object_row(self, object_id: uuid.UUID) -> dict:
        row = self.conn.execute(text(
            "SELECT obj_type AS type, project, tags, properties, summary, confidence, tier, stage, connection_count,"
            " staleness, captured_by, run_id, updated_at FROM capture_objects WHERE id = :i"), {"i": object_id})
        return dict(row.mappings().one())

    def chunk_ids(self, document_id: uuid.UUID | None) -> list[uuid.UUID]:
        if document_id is None:
            return []
        return list(self.conn.execute(text("SELECT id FROM chunks WHERE document_id = :d ORDER BY chunk_index"),
                                      {"d": document_id}).scalars())

    def chunks(self, document_id: uuid.UUID | None, offset: int, limit: int) -> tuple[list[dict], int]:
        """A page of the document's chunks in order (the conversation columns too), and how many it has."""
        if document_id is None or not limit:
            return [], 0
        total = self.conn.execute(text("SELECT count(*) FROM chunks WHERE document_id = :d"),
                                  {"d": document_id}).scalar()
        rows = self.conn.execute(text(
            "SELECT id, chunk_index AS index, text, token_count, cut_type, occurred_at, speakers, dates"
            " FROM chunks WHERE document_id = :d ORDER BY chunk_index OFFSET :o LIMIT :k"),
            {"d": document_id, "o": offset, "k": limit}).mappings()
        return [dict(r) for r in rows], total

    def objects(self, dataset: uuid.UUID, *, type: str | None, project: str | None, tag: str | None,
                offset: int, limit: int) -> tuple[list[dict], int]:
        where, params = ["o.dataset_id = :d"], {"d": dataset, "o": offset, "k": limit}
        if type:
            where.append("o.obj_type = :type")
            params["type"] = type
        if project:
            where.append("lower(o.project) = lower(:project)")
            params["project"] = project
        if tag:
            where.append(":tag = ANY(o.tags)")
            params["tag"] = tag
        cond = " AND ".join(where)
        total = self.conn.execute(text(f"SELECT count(*) FROM capture_objects o WHERE {cond}"), params).scalar()
        rows = self.conn.execute(text(
            "SELECT o.id, o.title, o.obj_type AS type, o.project, o.tags, o.summary, o.tier, o.stage, o.created_at"
            f" FROM capture_objects o WHERE {cond} ORDER BY o.created_at DESC, o.id OFFSET :o LIMIT :k"), params)
        return [dict(r) for r in rows.mappings()], total

    def documents(self, dataset: uuid.UUID, *, type: str | None, node_set: str | None, offset: int,
                  limit: int) -> tuple[list[dict], int]:
        where = ["i.dataset_id = :d", "NOT EXISTS (SELECT 1 FROM capture_objects o WHERE o.id = i.id)"]
        params: dict[str, Any] = {"d": dataset, "o": offset, "k": limit}
        if type:
            where.append("d.doc_type = :type")
            params["type"] = type
        if node_set:
            where.append(":ns = ANY(i.node_sets)")
            params["ns"] = node_set
        cond = " AND ".join(where)
        joined = " FROM data_items i LEFT JOIN documents d ON d.data_item_id = i.id"
        total = self.conn.execute(text(f"SELECT count(*){joined} WHERE {cond}"), params).scalar()
        rows = self.conn.execute(text(
            "SELECT i.id, COALESCE(d.title, i.name) AS title, i.name, d.doc_type AS type, i.node_sets, i.source,"
            " length(i.content) AS chars, i.created_at,"
            " (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) AS chunks"
            f"{joined} WHERE {cond} ORDER BY i.created_at DESC, i.id OFFSET :o LIMIT :k"), params)
        return [dict(r) for r in rows.mappings()], total

    # ------------------------------------------------------------ entities and edges

    def entity(self, dataset: uuid.UUID, entity_id: uuid.UUID | None, name: str | None) -> dict | None:
        """An entity (a captured object is one too) by id, else by normalised name."""
        cond, params = ("e.id = :i", {"i": entity_id}) if entity_id else ("e.name = :n", {"n": name})
        row = self.conn.execute(text(
            "SELECT e.id, e.display_name AS name, e.description, et.name AS type FROM entities e"
            f" LEFT JOIN entity_types et ON et.id = e.type_id WHERE e.dataset_id = :d AND {cond}"
            " ORDER BY e.created_at, e.id LIMIT 1"), {"d": dataset, **params}).mappings().first()
        return dict(row) if row else None

    def entity_types(self, entity_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str | None]:
        if not entity_ids:
            return {}
        rows = self.conn.execute(text(
            "SELECT e.id, et.name FROM entities e LEFT JOIN entity_types et ON et.id = e.type_id"
            " WHERE e.id = ANY(:i)"), {"i": list(entity_ids)})
        return {r[0]: r[1] for r in rows}

    def edges_touching(self, dataset: uuid.UUID, node_ids: Sequence[uuid.UUID], limit: int, *,
                       current_only: bool = False) -> list[dict]:
        """Fact edges with an endpoint among the nodes (names of both ends), oldest first."""
        if not node_ids:
            return []
        cond = " AND NOT g.superseded AND (g.valid_to IS NULL OR g.valid_to > now())" if current_only else ""
        rows = self.conn.execute(text(
            f"SELECT {_EDGE_COLUMNS}{_EDGE_FROM} WHERE g.dataset_id = :d AND {_FACT}"
            f" AND (g.source_id = ANY(:n) OR g.target_id = ANY(:n)){cond} ORDER BY g.created_at, g.id LIMIT :k"),
            {"d": dataset, "n": list(node_ids), "k": limit}).mappings()
        return [dict(r) for r in rows]

    def facts_of_chunks(self, dataset: uuid.UUID, chunk_ids: Sequence[uuid.UUID], exclude: uuid.UUID,
                        limit: int) -> list[dict]:
        """Facts these chunks state (their provenance), except edges touching `exclude`."""
        if not chunk_ids or not limit:
            return []
        rows = self.conn.execute(text(
            f"SELECT {_EDGE_COLUMNS}{_EDGE_FROM} WHERE g.dataset_id = :d AND {_FACT}"
            " AND g.provenance && CAST(:c AS uuid[]) AND g.source_id <> :x AND g.target_id <> :x"
            " ORDER BY g.created_at, g.id LIMIT :k"),
            {"d": dataset, "c": list(chunk_ids), "x": exclude, "k": limit}).mappings()
        return [dict(r) for r in rows]

    def intervals(self, edge_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[dict]]:
        if not edge_ids:
            return {}
        rows = self.conn.execute(text(
            "SELECT edge_id, valid_from, valid_to, starts_at, ends_at, ended, asserted_at, superseded_by"
            " FROM edge_intervals WHERE edge_id = ANY(:e) ORDER BY starts_at NULLS FIRST, valid_from NULLS FIRST, id"),
            {"e": list(edge_ids)}).mappings()
        out: dict[uuid.UUID, list[dict]] = {}
        for r in rows:
            out.setdefault(r["edge_id"], []).append(dict(r))
        return out

    def chunk_sources(self, chunk_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict]:
        """chunk id -> {data_item_id, title} of its document."""
        if not chunk_ids:
            return {}
        rows = self.conn.execute(text(
            "SELECT c.id, d.data_item_id, COALESCE(d.title, i.name) AS title FROM chunks c"
            " JOIN documents d ON d.id = c.document_id JOIN data_items i ON i.id = d.data_item_id"
            " WHERE c.id = ANY(:c)"), {"c": list(chunk_ids)}).mappings()
        return {r["id"]: {"data_item_id": r["data_item_id"], "title": r["title"]} for r in rows}

    def contradictions(self, dataset: uuid.UUID, ends: Sequence[uuid.UUID]) -> list[dict]:
        """`contradicts` edges between any of these facts (or objects)."""
        if not ends:
            return []
        rows = self.conn.execute(text(
            "SELECT g.id, g.source_id, g.target_id, g.properties, g.edge_text FROM edges g"
            f" WHERE g.dataset_id = :d AND {CONFLICT}"
            " AND (g.source_id = ANY(:n) OR g.target_id = ANY(:n)) ORDER BY g.id"),
            {"d": dataset, "n": list(ends)}).mappings()
        return [dict(r) for r in rows]

    def edge_texts(self, edge_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
        if not edge_ids:
            return {}
        rows = self.conn.execute(text("SELECT id, edge_text FROM edges WHERE id = ANY(:e)"), {"e": list(edge_ids)})
        return {r[0]: r[1] for r in rows}

    def edge_exists(self, edge_id: uuid.UUID) -> bool:
        return self.conn.execute(text("SELECT 1 FROM edges WHERE id = :e"), {"e": edge_id}).first() is not None
