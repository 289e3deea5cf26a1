"""Reads for recall: vector, lexical and graph-neighbourhood queries, always dataset-scoped."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Connection, text


class SearchRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    def _iterative(self) -> None:
        # pgvector 0.8: keep scanning the HNSW index until enough rows pass the dataset filter.
        self.conn.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))

    def chunks_by_vector(self, datasets: Sequence[uuid.UUID], vector: list[float], limit: int) -> list[dict]:
        self._iterative()
        rows = self.conn.execute(
            text(
                "SELECT c.id, c.text, c.document_id, c.dataset_id, c.chunk_index, c.importance,"
                " c.truth_alignment, c.truth_epoch, c.truth_signature, d.data_item_id, d.title,"
                " c.embedding <=> CAST(:v AS vector) AS distance"
                " FROM chunks c JOIN documents d ON d.id = c.document_id"
                " WHERE c.dataset_id = ANY(:ds) AND c.embedding IS NOT NULL"
                " ORDER BY c.embedding <=> CAST(:v AS vector) LIMIT :k"
            ),
            {"v": str(list(vector)), "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def chunks_lexical(self, datasets: Sequence[uuid.UUID], query: str, limit: int) -> list[dict]:
        rows = self.conn.execute(
            text(
                "SELECT c.id, c.text, c.document_id, c.dataset_id, c.chunk_index, c.importance,"
                " d.data_item_id, d.title, ts_rank_cd(c.tsv, q) AS rank"
                " FROM chunks c JOIN documents d ON d.id = c.document_id,"
                " websearch_to_tsquery('english', :q) q"
                " WHERE c.dataset_id = ANY(:ds) AND c.tsv @@ q"
                " ORDER BY rank DESC, c.id LIMIT :k"
            ),
            {"q": query, "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def chunks_lexical_any(self, datasets: Sequence[uuid.UUID], query: str, limit: int) -> list[dict]:
        """OR-of-terms lexical match, for hybrid ranking where every term need not appear."""
        rows = self.conn.execute(
            text(
                "WITH q AS (SELECT to_tsquery('english', string_agg(lexeme, ' | ')) AS q"
                " FROM unnest(to_tsvector('english', :q)))"
                " SELECT c.id, c.text, c.document_id, c.dataset_id, c.chunk_index, c.importance,"
                " d.data_item_id, d.title, ts_rank_cd(c.tsv, q.q) AS rank"
                " FROM chunks c JOIN documents d ON d.id = c.document_id, q"
                " WHERE q.q IS NOT NULL AND c.dataset_id = ANY(:ds) AND c.tsv @@ q.q"
                " ORDER BY rank DESC, c.id LIMIT :k"
            ),
            {"q": query, "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def summaries_by_vector(self, datasets: Sequence[uuid.UUID], vector: list[float], limit: int) -> list[dict]:
        self._iterative()
        rows = self.conn.execute(
            text(
                "SELECT s.id, s.text, s.chunk_id, s.dataset_id, c.document_id, d.data_item_id, d.title,"
                " c.importance, s.embedding <=> CAST(:v AS vector) AS distance"
                " FROM summaries s JOIN chunks c ON c.id = s.chunk_id JOIN documents d ON d.id = c.document_id"
                " WHERE s.dataset_id = ANY(:ds) AND s.embedding IS NOT NULL"
                " ORDER BY s.embedding <=> CAST(:v AS vector) LIMIT :k"
            ),
            {"v": str(list(vector)), "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def entities_by_vector(self, datasets: Sequence[uuid.UUID], vector: list[float], limit: int) -> list[dict]:
        self._iterative()
        rows = self.conn.execute(
            text(
                "SELECT e.id, e.display_name, e.description, e.dataset_id,"
                " e.embedding <=> CAST(:v AS vector) AS distance FROM entities e"
                " WHERE e.dataset_id = ANY(:ds) AND e.embedding IS NOT NULL"
                " ORDER BY e.embedding <=> CAST(:v AS vector) LIMIT :k"
            ),
            {"v": str(list(vector)), "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def edges_by_vector(
        self, datasets: Sequence[uuid.UUID], vector: list[float], limit: int, include_structural: bool = False
    ) -> list[dict]:
        self._iterative()
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.edge_text, g.embedding <=> CAST(:v AS vector) AS distance"
                " FROM edges g WHERE g.dataset_id = ANY(:ds) AND g.embedding IS NOT NULL"
                + ("" if include_structural else " AND g.relationship <> 'contains'")
                + " ORDER BY g.embedding <=> CAST(:v AS vector) LIMIT :k"
            ),
            {"v": str(list(vector)), "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def triplets(
        self,
        datasets: Sequence[uuid.UUID],
        *,
        edge_ids: Sequence[uuid.UUID] = (),
        entity_ids: Sequence[uuid.UUID] = (),
        limit: int = 200,
    ) -> list[dict]:
        """Entity-to-entity edges given by id or touching the given entities (depth 1)."""
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.source_id, g.target_id, g.relationship, g.edge_text, g.properties,"
                " g.provenance, g.superseded, g.superseded_by, g.supersession_reason, g.valid_from,"
                " g.valid_to, g.created_at, g.updated_at, g.dataset_id,"
                " s.display_name AS source_name, t.display_name AS target_name"
                " FROM edges g JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
                " WHERE g.dataset_id = ANY(:ds)"
                " AND (g.id = ANY(:eids) OR g.source_id = ANY(:nids) OR g.target_id = ANY(:nids))"
                " ORDER BY g.updated_at DESC, g.id LIMIT :k"
            ),
            {"ds": list(datasets), "eids": list(edge_ids), "nids": list(entity_ids), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def chunk_documents(self, chunk_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict]:
        rows = self.conn.execute(
            text(
                "SELECT c.id, c.document_id, d.data_item_id, d.title, c.dataset_id FROM chunks c"
                " JOIN documents d ON d.id = c.document_id WHERE c.id = ANY(:ids)"
            ),
            {"ids": list(chunk_ids)},
        ).mappings()
        return {r["id"]: dict(r) for r in rows}
