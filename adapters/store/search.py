"""Reads for recall: vector, lexical, temporal and graph-neighbourhood queries, always
dataset-scoped. The caller authorises the datasets first; every query filters on them.
The vector reads are here; the lexical (BM25) ones in search_bm25.py, the temporal and graph
ones in search_graph.py, the shared SQL fragments in search_sql.py."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Connection, text

from engram.adapters.store.capture import CaptureReads
from engram.adapters.store.search_bm25 import LexicalReads
from engram.adapters.store.search_graph import GraphReads
from engram.adapters.store.search_sql import CHUNK_COLUMNS, NOT_FACT, window_sql
from engram.adapters.store.vector_indexes import EF_SEARCH, Route, nearest_sql, routes
from engram.adapters.store.vectors import vector_literal
from engram.models.search import EdgeWindow


class SearchRepository(CaptureReads, GraphReads, LexicalReads):
    def __init__(self, conn: Connection, exact: bool = False, ef_search: int = EF_SEARCH):
        self.conn = conn
        # hnsw.ef_search of the vector reads (ENGRAM_VECTOR_EF_SEARCH): recall against latency.
        self.ef_search = int(ef_search)
        # True: bypass the vector indexes (benchmarks measure HNSW against this exact scan).
        self.exact = exact
        # Non-empty: chunk and summary reads keep only chunks of data items in one of these node sets.
        self.node_sets: list[str] = []

    def _in_sets(self, document_column: str) -> str:
        if not self.node_sets:
            return ""
        return (f" AND {document_column} IN (SELECT nd.id FROM documents nd JOIN data_items ni"
                " ON ni.id = nd.data_item_id WHERE ni.dataset_id = ANY(:ds) AND ni.node_sets && CAST(:node_sets AS text[]))")

    # ------------------------------------------------------------ scope

    def readable_datasets(self, user_id: uuid.UUID) -> list[tuple[uuid.UUID, str]]:
        """Every dataset the user holds a read grant on (own ones included), by name."""
        rows = self.conn.execute(
            text(
                "SELECT d.id, d.name FROM datasets d JOIN dataset_grants g ON g.dataset_id = d.id"
                " WHERE g.principal = :p AND g.permission = 'read' ORDER BY d.name, d.created_at"
            ),
            {"p": f"user:{user_id}"},
        ).all()
        return [(r[0], r[1]) for r in rows]

    # ------------------------------------------------------------ vector access

    def _nearest(self, limit: int) -> None:
        if self.exact:
            self.conn.execute(text("SET LOCAL enable_indexscan = off"))
            self.conn.execute(text("SET LOCAL enable_bitmapscan = off"))
            return
        # pgvector 0.8: keep scanning an HNSW index until enough rows pass the other conditions.
        self.conn.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
        self.conn.execute(text(f"SET LOCAL hnsw.ef_search = {max(self.ef_search, min(1000, 2 * int(limit)))}"))

    def _route(self, tables: Sequence[str], datasets: Sequence[uuid.UUID]) -> dict[str, Route]:
        """Each table's read of the datasets: own indexes, exact scan (vector_indexes.py); with
        `exact` every dataset in one exact scan (the benchmarks' reference)."""
        if self.exact:
            return {t: Route([], list(datasets), True) for t in tables}
        return routes(self.conn, tables, datasets)

    # A chunk's distance: a conversation chunk's from its turn windows (1 - the mean over widths
    # of the best window's cosine similarity, pipelines/cognify/windows.py), any other's its own.
    _WINDOWED = (
        " wbest AS (SELECT w.chunk_id, w.width, min(w.embedding <=> CAST(:v AS vector)) AS distance"
        "  FROM chunk_windows w WHERE w.chunk_id IN (SELECT id FROM cand) AND w.embedding IS NOT NULL"
        "  GROUP BY w.chunk_id, w.width),"
        " wdist AS (SELECT chunk_id, avg(distance) AS distance FROM wbest GROUP BY chunk_id)"
    )

    def chunks_by_vector(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int) -> list[dict]:
        """The nearest chunks: candidates from the chunks' own vectors and from the turn
        windows' (as many windows as chunks, times 3: a chunk's windows crowd together), ranked
        by each chunk's distance (windowed for a conversation chunk)."""
        self._nearest(3 * limit)
        route = self._route(("chunks", "chunk_windows"), datasets)
        hits = nearest_sql("chunks", "h", "h.id", self._in_sets("h.document_id"), route["chunks"])
        whits = nearest_sql("chunk_windows", "w", "w.chunk_id", self._in_sets("w.document_id"),
                            route["chunk_windows"], ":wk", ":wrest")
        # Index scans run on chunks and windows alone; relaxed order is re-sorted after the join.
        rows = self.conn.execute(
            text(
                f"WITH hits AS MATERIALIZED ({hits}), whits AS MATERIALIZED ({whits}),"
                " cand AS MATERIALIZED (SELECT id FROM hits UNION SELECT chunk_id FROM whits),"
                + self._WINDOWED +
                f" SELECT {CHUNK_COLUMNS}, COALESCE(w.distance, c.embedding <=> CAST(:v AS vector)) AS distance"
                " FROM cand JOIN chunks c ON c.id = cand.id JOIN documents d ON d.id = c.document_id"
                " LEFT JOIN wdist w ON w.chunk_id = c.id"
                " ORDER BY distance, c.id LIMIT :k"
            ),
            {"v": vector_literal(vector), "ds": list(datasets), "k": limit, "wk": 3 * limit, "node_sets": self.node_sets,
             "rest": route["chunks"].rest, "wrest": route["chunk_windows"].rest},
        ).mappings()
        return [dict(r) for r in rows]

    def chunks_by_ids(self, chunk_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict]:
        rows = self.conn.execute(
            text(f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.document_id"
                 " WHERE c.id = ANY(:ids)"),
            {"ids": list(chunk_ids)},
        ).mappings()
        return {r["id"]: dict(r) for r in rows}

    def chunk_scores(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID], vector: Sequence[float],
                     terms: dict[str, int], k1: float = 1.5, b: float = 0.75,
                     stats: tuple[float, float, dict[str, float]] | None = None) -> dict[uuid.UUID, tuple[float, float]]:
        """Exact (cosine distance, Okapi BM25 score) of given chunks: the scores a ranked list
        left out, for fusing two lists by their scores. Both exactly as chunks_by_vector and
        chunks_bm25 score. `stats`: the collection's (N, avgdl, df by term) that chunks_bm25
        returned in this recall's transaction (else read again: bm25_statistics); only these
        chunks' postings are read."""
        if not chunk_ids:
            return {}
        scored, params = self.bm25_scores(datasets, chunk_ids, terms,
                                          stats or self.bm25_statistics(datasets, list(terms)), k1, b)
        params["v"] = vector_literal(vector)
        rows = self.conn.execute(
            text(
                "WITH " + scored + ","
                " cand AS (SELECT unnest(CAST(:ids AS uuid[])) AS id)," + self._WINDOWED +
                " SELECT c.id, COALESCE(w.distance, c.embedding <=> CAST(:v AS vector)) AS distance,"
                " COALESCE(s.score, 0) AS score FROM chunks c LEFT JOIN scored s ON s.chunk_id = c.id"
                " LEFT JOIN wdist w ON w.chunk_id = c.id WHERE c.id = ANY(:ids)"
            ),
            params,
        ).mappings()
        return {r["id"]: (r["distance"], float(r["score"])) for r in rows}

    def summaries_by_vector(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int) -> list[dict]:
        self._nearest(limit)
        route = self._route(("summaries",), datasets)["summaries"]
        in_sets = (f" AND h.chunk_id IN (SELECT sc.id FROM chunks sc WHERE sc.dataset_id = ANY(:ds)"
                   f"{self._in_sets('sc.document_id')})" if self.node_sets else "")
        rows = self.conn.execute(
            text(
                f"WITH hits AS MATERIALIZED ({nearest_sql('summaries', 'h', 'h.id', in_sets, route)})"
                " SELECT s.id, s.text, s.chunk_id, s.dataset_id, c.document_id, d.data_item_id, d.title,"
                " c.importance, c.occurred_at, c.speakers, h.distance FROM hits h JOIN summaries s ON s.id = h.id"
                " JOIN chunks c ON c.id = s.chunk_id JOIN documents d ON d.id = c.document_id"
                " ORDER BY h.distance, s.id"
            ),
            {"v": vector_literal(vector), "ds": list(datasets), "k": limit, "node_sets": self.node_sets, "rest": route.rest},
        ).mappings()
        return [dict(r) for r in rows]

    def summaries_of_chunks(self, chunk_ids: Sequence[uuid.UUID], vector: Sequence[float]) -> list[dict]:
        rows = self.conn.execute(
            text(
                "SELECT s.id, s.text, s.chunk_id, s.dataset_id, c.document_id, d.data_item_id, d.title,"
                " c.importance, c.occurred_at, c.speakers, s.embedding <=> CAST(:v AS vector) AS distance"
                " FROM summaries s JOIN chunks c ON c.id = s.chunk_id JOIN documents d ON d.id = c.document_id"
                " WHERE s.chunk_id = ANY(:ids)"
            ),
            {"v": vector_literal(vector), "ids": list(chunk_ids)},
        ).mappings()
        return [dict(r) for r in rows]

    def entities_by_vector(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int) -> list[dict]:
        self._nearest(limit)
        route = self._route(("entities",), datasets)["entities"]
        rows = self.conn.execute(
            text(nearest_sql("entities", "e", "e.id, e.display_name, e.description, e.dataset_id", "", route)),
            {"v": vector_literal(vector), "k": limit, "rest": route.rest},
        ).mappings()
        return [dict(r) for r in rows]

    def edges_by_vector(
        self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int, window: EdgeWindow = EdgeWindow()
    ) -> list[dict]:
        """Fact edges nearest by edge-text vector (structural ones excluded)."""
        self._nearest(limit)
        cond, params = window_sql(window, exact=False)
        route = self._route(("edges",), datasets)["edges"]
        rows = self.conn.execute(
            text(nearest_sql("edges", "g", "g.id, g.edge_text", f" AND {NOT_FACT}{cond}", route)),
            {"v": vector_literal(vector), "k": limit, "rest": route.rest, **params},
        ).mappings()
        return [dict(r) for r in rows]
