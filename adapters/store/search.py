"""Reads for recall: vector, lexical, temporal and graph-neighbourhood queries, always
dataset-scoped. The caller authorises the datasets first; every query filters on them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, text

from engram.adapters.store.capture import CaptureReads
from engram.models.search import EdgeWindow
from engram.pipelines.dates import YEAR, YEARS
from engram.pipelines.facts import NOT_FACTS


def facts_only(column: str = "g.relationship") -> str:
    """SQL: the edge is a fact (which edges are: pipelines/facts)."""
    return f"{column} NOT IN ({', '.join(repr(r) for r in sorted(NOT_FACTS))})"


_NOT_FACT = facts_only()
# The one year rule (pipelines/dates.YEAR, a regex Postgres reads too) as a whole word.
_YEAR_RE = rf"\m({YEAR})\M"
_CHUNK_COLUMNS = (
    "c.id, c.text, c.document_id, c.dataset_id, c.chunk_index, c.importance, c.truth_alignment,"
    " c.truth_epoch, c.truth_signature, d.data_item_id, d.title"
)


def _vector(v: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def _window_sql(window: EdgeWindow, alias: str = "g", *, exact: bool = True) -> tuple[str, dict]:
    """SQL condition choosing the edges a window admits.

    as_of: valid_from <= as_of < valid_to, open ends allowed. An edge with no valid_from that
    superseded others became valid when they stopped being valid (their valid_to); a
    superseded edge with no valid_to ended at its last update. `exact=False` leaves out the
    correlated sub-query (for index scans); the exact filter is applied when rows are read.
    """
    g = alias
    if window.as_of is not None:
        ends = f"COALESCE({g}.valid_to, CASE WHEN {g}.superseded THEN {g}.updated_at END)"
        cond = f" AND ({ends} IS NULL OR {ends} > :as_of)"
        if exact:
            starts = (f"COALESCE({g}.valid_from, (SELECT min(l.valid_to) FROM edges l"
                      f" WHERE l.superseded_by = {g}.id AND l.dataset_id = {g}.dataset_id))")
            cond += f" AND ({starts} IS NULL OR {starts} <= :as_of)"
            # Within the edge's span, one of its intervals must hold (a re-elected mayor's gap).
            cond += (f" AND (NOT EXISTS (SELECT 1 FROM edge_intervals i WHERE i.edge_id = {g}.id)"
                     f" OR EXISTS (SELECT 1 FROM edge_intervals i WHERE i.edge_id = {g}.id"
                     " AND (i.starts_at IS NULL OR i.starts_at <= :as_of) AND (i.ends_at IS NULL OR i.ends_at > :as_of)))")
        return cond, {"as_of": window.as_of}
    if window.include_history:
        return "", {}
    return f" AND NOT {g}.superseded AND ({g}.valid_to IS NULL OR {g}.valid_to > now())", {}


class SearchRepository(CaptureReads):
    def __init__(self, conn: Connection, exact: bool = False):
        self.conn = conn
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
        # pgvector 0.8: keep scanning the HNSW index until enough rows pass the dataset filter.
        self.conn.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
        self.conn.execute(text(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, 2 * int(limit)))}"))

    def chunks_by_vector(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int) -> list[dict]:
        self._nearest(limit)
        # The index scan runs on chunks alone; relaxed order is re-sorted after the join.
        rows = self.conn.execute(
            text(
                "WITH hits AS MATERIALIZED (SELECT id, embedding <=> CAST(:v AS vector) AS distance"
                f" FROM chunks WHERE dataset_id = ANY(:ds) AND embedding IS NOT NULL{self._in_sets('document_id')}"
                " ORDER BY embedding <=> CAST(:v AS vector) LIMIT :k)"
                f" SELECT {_CHUNK_COLUMNS}, h.distance FROM hits h JOIN chunks c ON c.id = h.id"
                " JOIN documents d ON d.id = c.document_id ORDER BY h.distance, c.id"
            ),
            {"v": _vector(vector), "ds": list(datasets), "k": limit, "node_sets": self.node_sets},
        ).mappings()
        return [dict(r) for r in rows]

    def chunks_by_ids(self, chunk_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict]:
        rows = self.conn.execute(
            text(f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.document_id"
                 " WHERE c.id = ANY(:ids)"),
            {"ids": list(chunk_ids)},
        ).mappings()
        return {r["id"]: dict(r) for r in rows}

    def summaries_by_vector(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int) -> list[dict]:
        self._nearest(limit)
        rows = self.conn.execute(
            text(
                "WITH hits AS MATERIALIZED (SELECT id, embedding <=> CAST(:v AS vector) AS distance"
                " FROM summaries WHERE dataset_id = ANY(:ds) AND embedding IS NOT NULL"
                + (f" AND chunk_id IN (SELECT sc.id FROM chunks sc WHERE sc.dataset_id = ANY(:ds)"
                   f"{self._in_sets('sc.document_id')})" if self.node_sets else "") +
                " ORDER BY embedding <=> CAST(:v AS vector) LIMIT :k)"
                " SELECT s.id, s.text, s.chunk_id, s.dataset_id, c.document_id, d.data_item_id, d.title,"
                " c.importance, h.distance FROM hits h JOIN summaries s ON s.id = h.id"
                " JOIN chunks c ON c.id = s.chunk_id JOIN documents d ON d.id = c.document_id"
                " ORDER BY h.distance, s.id"
            ),
            {"v": _vector(vector), "ds": list(datasets), "k": limit, "node_sets": self.node_sets},
        ).mappings()
        return [dict(r) for r in rows]

    def summaries_of_chunks(self, chunk_ids: Sequence[uuid.UUID], vector: Sequence[float]) -> list[dict]:
        rows = self.conn.execute(
            text(
                "SELECT s.id, s.text, s.chunk_id, s.dataset_id, c.document_id, d.data_item_id, d.title,"
                " c.importance, s.embedding <=> CAST(:v AS vector) AS distance"
                " FROM summaries s JOIN chunks c ON c.id = s.chunk_id JOIN documents d ON d.id = c.document_id"
                " WHERE s.chunk_id = ANY(:ids)"
            ),
            {"v": _vector(vector), "ids": list(chunk_ids)},
        ).mappings()
        return [dict(r) for r in rows]

    def entities_by_vector(self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int) -> list[dict]:
        self._nearest(limit)
        rows = self.conn.execute(
            text(
                "SELECT e.id, e.display_name, e.description, e.dataset_id,"
                " e.embedding <=> CAST(:v AS vector) AS distance FROM entities e"
                " WHERE e.dataset_id = ANY(:ds) AND e.embedding IS NOT NULL"
                " ORDER BY e.embedding <=> CAST(:v AS vector) LIMIT :k"
            ),
            {"v": _vector(vector), "ds": list(datasets), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def edges_by_vector(
        self, datasets: Sequence[uuid.UUID], vector: Sequence[float], limit: int, window: EdgeWindow = EdgeWindow()
    ) -> list[dict]:
        """Fact edges nearest by edge-text vector (structural ones excluded)."""
        self._nearest(limit)
        cond, params = _window_sql(window, exact=False)
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.edge_text, g.embedding <=> CAST(:v AS vector) AS distance FROM edges g"
                f" WHERE g.dataset_id = ANY(:ds) AND g.embedding IS NOT NULL AND {_NOT_FACT}{cond}"
                " ORDER BY g.embedding <=> CAST(:v AS vector) LIMIT :k"
            ),
            {"v": _vector(vector), "ds": list(datasets), "k": limit, **params},
        ).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ lexical

    def chunks_bm25(self, datasets: Sequence[uuid.UUID], terms: dict[str, int], limit: int,
                    k1: float = 1.5, b: float = 0.75) -> list[dict]:
        """Okapi BM25 (Lucene idf) over the postings of the datasets, query terms OR-ed.

        N, avgdl and every df are read from the same snapshot as the postings, so the load's
        one transaction keeps them consistent; several datasets are scored as one collection.
        """
        if not terms:
            return []
        rows = self.conn.execute(
            text(
                "WITH q AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:qtf AS int[])) AS q(term, qtf)),"
                " stats AS (SELECT count(*)::float8 AS n, GREATEST(COALESCE(avg(lex_length), 1), 1)::float8 AS avgdl"
                "  FROM chunks WHERE dataset_id = ANY(:ds) AND lex_length IS NOT NULL),"
                " p AS MATERIALIZED (SELECT p.term, p.chunk_id, p.tf, p.dl, q.qtf FROM chunk_terms p"
                "  JOIN q ON q.term = p.term WHERE p.dataset_id = ANY(:ds)"
                + (f" AND p.chunk_id IN (SELECT sc.id FROM chunks sc WHERE sc.dataset_id = ANY(:ds)"
                   f"{self._in_sets('sc.document_id')})" if self.node_sets else "") + "),"
                " df AS (SELECT term, count(*)::float8 AS df FROM p GROUP BY term),"
                " scored AS (SELECT p.chunk_id, sum(p.qtf * ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5))"
                "  * p.tf / (p.tf + :k1 * (1 - :b + :b * p.dl / stats.avgdl))) AS score"
                "  FROM p JOIN df ON df.term = p.term CROSS JOIN stats GROUP BY p.chunk_id"
                "  ORDER BY score DESC, p.chunk_id LIMIT :k)"
                f" SELECT {_CHUNK_COLUMNS}, s.score AS rank FROM scored s JOIN chunks c ON c.id = s.chunk_id"
                " JOIN documents d ON d.id = c.document_id ORDER BY s.score DESC, c.id"
            ),
            {"terms": list(terms), "qtf": list(terms.values()), "ds": list(datasets), "k": limit,
             "k1": float(k1), "b": float(b), "node_sets": self.node_sets},
        ).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ temporal

    def chunks_in_years(
        self, datasets: Sequence[uuid.UUID], vector: Sequence[float], first: int, last: int, limit: int
    ) -> list[dict]:
        """Chunks naming a year in [first, last] (the indexed `years` column written at load,
        pipelines/dates.years_named), nearest first."""
        self._nearest(limit)
        lo, hi = max(first, YEARS[0]), min(last, YEARS[1])
        if lo > hi:
            return []
        if (lo, hi) == YEARS:
            dated, params = "cardinality(c.years) > 0", {}
        else:
            dated, params = "c.years && CAST(:yrs AS integer[])", {"yrs": list(range(lo, hi + 1))}
        rows = self.conn.execute(
            text(
                f"SELECT {_CHUNK_COLUMNS}, c.embedding <=> CAST(:v AS vector) AS distance"
                " FROM chunks c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.dataset_id = ANY(:ds) AND c.embedding IS NOT NULL AND {dated}"
                " ORDER BY c.embedding <=> CAST(:v AS vector), c.id LIMIT :k"
            ),
            {"v": _vector(vector), "ds": list(datasets), "k": limit, **params},
        ).mappings()
        return [dict(r) for r in rows]

    def dated_triplets(
        self,
        datasets: Sequence[uuid.UUID],
        vector: Sequence[float],
        start: datetime,
        end: datetime,
        window: EdgeWindow = EdgeWindow(),
        limit: int = 100,
    ) -> list[dict]:
        """Facts valid at some time in [start, end): an interval of theirs overlaps it (an
        edge without intervals: its valid_from, or a year in its own text, falls inside)."""
        where = (
            "(EXISTS (SELECT 1 FROM edge_intervals i WHERE i.edge_id = g.id"
            "  AND COALESCE(i.starts_at, i.valid_from, i.valid_to) IS NOT NULL"
            "  AND COALESCE(i.starts_at, i.valid_from, '-infinity') < :hi AND (i.ends_at IS NULL OR i.ends_at > :lo))"
            " OR (NOT EXISTS (SELECT 1 FROM edge_intervals i WHERE i.edge_id = g.id) AND"
            "  ((g.valid_from IS NOT NULL AND g.valid_from >= :lo AND g.valid_from < :hi)"
            "  OR EXISTS (SELECT 1 FROM regexp_matches(g.edge_text, :re, 'g') m"
            "   WHERE m[1]::int BETWEEN extract(year FROM CAST(:lo AS timestamptz))"
            "   AND extract(year FROM CAST(:hi AS timestamptz) - interval '1 microsecond')))))"
        )
        return self._triplets(datasets, vector, where, {"lo": start, "hi": end, "re": _YEAR_RE}, window, limit)

    def fact_intervals(self, edge_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[dict]]:
        """Every validity interval of these edges, stated and computed columns, by edge."""
        if not edge_ids:
            return {}
        rows = self.conn.execute(
            text(
                "SELECT i.id, i.edge_id, i.valid_from, i.valid_from_precision, i.valid_to, i.valid_to_precision,"
                " i.asserted_at, i.asserted_precision, i.ended, i.functional, i.starts_at, i.ends_at, i.superseded_by FROM edge_intervals i"
                " WHERE i.edge_id = ANY(:ids) ORDER BY i.starts_at NULLS FIRST, i.valid_from NULLS FIRST, i.id"
            ),
            {"ids": list(edge_ids)},
        ).mappings()
        out: dict[uuid.UUID, list[dict]] = {}
        for r in rows:
            out.setdefault(r["edge_id"], []).append(dict(r))
        return out

    def chunk_assertions(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID]) -> list[dict]:
        """The judged (functional) facts these chunks state, each with its successor's fact."""
        if not chunk_ids:
            return []
        rows = self.conn.execute(
            text(
                "SELECT i.id, i.chunk_id, i.edge_id, i.valid_from, i.valid_from_precision, i.valid_to,"
                " i.valid_to_precision, i.ended, i.starts_at, i.ends_at, i.superseded_by,"
                " s.display_name AS source_name, g.relationship, t.display_name AS target_name,"
                " n.edge_id AS successor_edge_id, n.valid_from AS successor_from,"
                " n.valid_from_precision AS successor_precision,"
                " ns.display_name AS successor_source, ng.relationship AS successor_relationship,"
                " nt.display_name AS successor_target"
                " FROM edge_intervals i JOIN edges g ON g.id = i.edge_id"
                " JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
                " LEFT JOIN edge_intervals n ON n.id = i.superseded_by LEFT JOIN edges ng ON ng.id = n.edge_id"
                " LEFT JOIN entities ns ON ns.id = ng.source_id LEFT JOIN entities nt ON nt.id = ng.target_id"
                " WHERE i.functional AND i.dataset_id = ANY(:ds) AND i.chunk_id = ANY(:c) ORDER BY i.chunk_id, i.id"
            ),
            {"ds": list(datasets), "c": list(chunk_ids)},
        ).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ graph

    def triplets(
        self,
        datasets: Sequence[uuid.UUID],
        vector: Sequence[float],
        *,
        edge_ids: Sequence[uuid.UUID] = (),
        entity_ids: Sequence[uuid.UUID] = (),
        window: EdgeWindow = EdgeWindow(),
        limit: int = 200,
    ) -> list[dict]:
        """Entity-to-entity fact edges given by id or touching the given entities (depth 1)."""
        where = "(g.id = ANY(:eids) OR g.source_id = ANY(:nids) OR g.target_id = ANY(:nids))"
        params = {"eids": list(edge_ids), "nids": list(entity_ids)}
        return self._triplets(datasets, vector, where, params, window, limit)

    def _triplets(self, datasets, vector, where: str, params: dict, window: EdgeWindow, limit: int) -> list[dict]:
        cond, window_params = _window_sql(window)
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.source_id, g.target_id, g.relationship, g.edge_text, g.properties,"
                " g.provenance, g.superseded, g.superseded_by, g.supersession_reason, g.valid_from,"
                " g.valid_to, g.created_at, g.updated_at, g.dataset_id,"
                " s.display_name AS source_name, t.display_name AS target_name,"
                " 1 - (g.embedding <=> CAST(:v AS vector)) AS edge_sim,"
                " 1 - (s.embedding <=> CAST(:v AS vector)) AS source_sim,"
                " 1 - (t.embedding <=> CAST(:v AS vector)) AS target_sim"
                " FROM edges g JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
                f" WHERE g.dataset_id = ANY(:ds) AND {_NOT_FACT} AND {where}{cond}"
                " ORDER BY edge_sim DESC NULLS LAST, g.id LIMIT :k"
            ),
            {"v": _vector(vector), "ds": list(datasets), "k": limit, **params, **window_params},
        ).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ passage–entity graph

    def chunk_entities(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID]) -> list[dict]:
        """Entities the chunks mention (`contains` edges), with whether each is the chunk's main one."""
        rows = self.conn.execute(
            text(
                "SELECT g.source_id AS chunk_id, e.id, e.name, e.display_name, t.name AS type,"
                " COALESCE((g.properties->>'main')::boolean, false) AS main"
                " FROM edges g JOIN entities e ON e.id = g.target_id LEFT JOIN entity_types t ON t.id = e.type_id"
                " WHERE g.relationship = 'contains' AND g.source_id = ANY(:c) AND g.dataset_id = ANY(:ds)"
                " ORDER BY g.source_id, e.name"
            ),
            {"c": list(chunk_ids), "ds": list(datasets)},
        ).mappings()
        return [dict(r) for r in rows]

    def entities_named(self, datasets: Sequence[uuid.UUID], names: Sequence[str]) -> list[dict]:
        rows = self.conn.execute(
            text(
                "SELECT e.id, e.name, e.display_name, t.name AS type FROM entities e"
                " LEFT JOIN entity_types t ON t.id = e.type_id"
                " WHERE e.dataset_id = ANY(:ds) AND e.name = ANY(:n) ORDER BY e.name, e.id"
            ),
            {"ds": list(datasets), "n": list(names)},
        ).mappings()
        return [dict(r) for r in rows]

    def entity_passages(self, datasets: Sequence[uuid.UUID], names: Sequence[str], patterns: Sequence[str],
                        max_degree: int) -> list[dict]:
        """Chunks mentioning entities named exactly or LIKE a pattern, with each entity's degree
        (chunks mentioning it); entities in more than max_degree chunks are left out."""
        # A pattern names its first word ("jaws\\_%", "neil\\_%\\_armstrong") or its last ("%\\_mozart"):
        # each side is looked up by its word index first (migration 0013), then LIKE decides.
        plain = [p.replace("\\_", "_") for p in patterns]
        firsts = sorted({p.split("_", 1)[0] for p in plain if not p.startswith("%")})
        lasts = sorted({p.rsplit("_", 1)[-1] for p in plain if p.startswith("%")})
        rows = self.conn.execute(
            text(
                "WITH ents AS (SELECT e.id, e.name, e.display_name, e.type_id FROM entities e"
                "  WHERE e.dataset_id = ANY(:ds) AND e.name = ANY(:n)"
                "  UNION SELECT e.id, e.name, e.display_name, e.type_id FROM entities e"
                "  WHERE e.dataset_id = ANY(:ds) AND split_part(e.name, '_', 1) = ANY(:firsts)"
                "  AND e.name LIKE ANY(CAST(:p AS text[]))"
                "  UNION SELECT e.id, e.name, e.display_name, e.type_id FROM entities e"
                "  WHERE e.dataset_id = ANY(:ds) AND reverse(split_part(reverse(e.name), '_', 1)) = ANY(:lasts)"
                "  AND e.name LIKE ANY(CAST(:p AS text[]))),"
                " links AS (SELECT g.source_id AS chunk_id, ents.id, ents.name, ents.display_name, ents.type_id,"
                "  COALESCE((g.properties->>'main')::boolean, false) AS main,"
                "  count(*) OVER (PARTITION BY ents.id) AS degree"
                "  FROM ents JOIN edges g ON g.target_id = ents.id AND g.relationship = 'contains'"
                "  WHERE g.dataset_id = ANY(:ds)"
                + (f" AND g.source_id IN (SELECT sc.id FROM chunks sc WHERE sc.dataset_id = ANY(:ds)"
                   f"{self._in_sets('sc.document_id')})" if self.node_sets else "") + ")"
                " SELECT l.chunk_id, l.id, l.name, l.display_name, l.main, l.degree, t.name AS type FROM links l"
                " LEFT JOIN entity_types t ON t.id = l.type_id WHERE l.degree <= :m ORDER BY l.name, l.chunk_id"
            ),
            {"ds": list(datasets), "n": list(names), "p": list(patterns), "m": max_degree,
             "firsts": firsts, "lasts": lasts, "node_sets": self.node_sets},
        ).mappings()
        return [dict(r) for r in rows]

    def facts_in_chunks(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID],
                        entity_ids: Sequence[uuid.UUID], window: EdgeWindow = EdgeWindow()) -> list[dict]:
        """Visible fact edges read from the chunks that touch the entities."""
        cond, params = _window_sql(window)
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.source_id, g.target_id, g.relationship, s.display_name AS source_name,"
                " t.display_name AS target_name FROM edges g"
                " JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
                f" WHERE g.dataset_id = ANY(:ds) AND {_NOT_FACT} AND g.provenance && CAST(:c AS uuid[])"
                f" AND (g.source_id = ANY(:e) OR g.target_id = ANY(:e)){cond} ORDER BY g.relationship = 'related_to', g.id"
            ),
            {"ds": list(datasets), "c": list(chunk_ids), "e": list(entity_ids), **params},
        ).mappings()
        return [dict(r) for r in rows]

    def contradictions(self, datasets: Sequence[uuid.UUID], entity_ids: Sequence[uuid.UUID]) -> list[dict]:
        """`contradicts` edges touching any of the entities, with their properties."""
        if not entity_ids:
            return []
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.source_id, g.target_id, g.properties FROM edges g"
                " WHERE g.dataset_id = ANY(:ds) AND g.relationship = 'contradicts'"
                " AND (g.source_id = ANY(:n) OR g.target_id = ANY(:n)) ORDER BY g.id"
            ),
            {"ds": list(datasets), "n": list(entity_ids)},
        ).mappings()
        return [dict(r) for r in rows]
