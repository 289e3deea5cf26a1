"""Recall's temporal and graph-neighbourhood reads (mixed into the SearchRepository), always
dataset-scoped: chunks by year, dated triplets and fact intervals, triplets around entities, the
passage–entity graph (entities of chunks, passages naming entities, facts in chunks), contradictions."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date, datetime

from sqlalchemy import Connection, text

from engram.adapters.store.search_sql import CHUNK_COLUMNS, CONFLICT, MENTIONS, NOT_FACT, YEAR_RE, window_sql
from engram.adapters.store.vector_indexes import nearest_sql
from engram.adapters.store.vectors import vector_literal
from engram.models.search import EdgeWindow
from engram.pipelines.dates import YEARS
from engram.pipelines.recall.names import like_words


class GraphReads:
    """Temporal and graph reads; the SearchRepository supplies conn, exact, node_sets, _nearest and _in_sets."""

    conn: Connection

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
        route = self._route(("chunks",), datasets)["chunks"]
        rows = self.conn.execute(
            text(
                f"SELECT {CHUNK_COLUMNS}, h.distance FROM ({nearest_sql('chunks', 'c', 'c.id', f' AND {dated}', route)}) h"
                " JOIN chunks c ON c.id = h.id JOIN documents d ON d.id = c.document_id ORDER BY h.distance, c.id"
            ),
            {"v": vector_literal(vector), "k": limit, "rest": route.rest, **params},
        ).mappings()
        return [dict(r) for r in rows]

    def chunks_in_dates(
        self, datasets: Sequence[uuid.UUID], vector: Sequence[float], first: date, last: date, limit: int
    ) -> list[dict]:
        """Conversation chunks said in [first, last] (both inclusive) or naming a day in it through
        a relative phrase ("yesterday" resolved at load), nearest first."""
        self._nearest(limit)
        route = self._route(("chunks",), datasets)["chunks"]
        said = (" AND c.conversation IS NOT NULL"
                " AND ((c.occurred_at >= :first AND c.occurred_at < CAST(:last AS date) + 1)"
                "   OR EXISTS (SELECT 1 FROM jsonb_array_elements(c.dates) r"
                "              WHERE (r->>'start')::date <= :last AND (r->>'end')::date >= :first))")
        rows = self.conn.execute(
            text(
                f"SELECT {CHUNK_COLUMNS}, c.dates, h.distance FROM ({nearest_sql('chunks', 'c', 'c.id', said, route)}) h"
                " JOIN chunks c ON c.id = h.id JOIN documents d ON d.id = c.document_id ORDER BY h.distance, c.id"
            ),
            {"v": vector_literal(vector), "k": limit, "first": first, "last": last, "rest": route.rest},
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
        return self._triplets(datasets, vector, where, {"lo": start, "hi": end, "re": YEAR_RE}, window, limit)

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
        cond, window_params = window_sql(window)
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
                f" WHERE g.dataset_id = ANY(:ds) AND {NOT_FACT} AND {where}{cond}"
                " ORDER BY edge_sim DESC NULLS LAST, g.id LIMIT :k"
            ),
            {"v": vector_literal(vector), "ds": list(datasets), "k": limit, **params, **window_params},
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
                f" WHERE {MENTIONS} AND g.source_id = ANY(:c) AND g.dataset_id = ANY(:ds)"
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
        (chunks mentioning it) and the datasets' passage count (`total`: chunks with BM25 postings,
        so captured objects are not counted); entities in more than max_degree chunks are left out,
        and no more than max_degree + 1 of their mentions read."""
        # A pattern names its first word ("jaws\\_%", "neil\\_%\\_armstrong") or its last ("%\\_mozart"):
        # each side is looked up by its word index first (migration 0013), then LIKE decides.
        # A first word that is itself a pattern ("phi%\\_jackson": Phil ~ Philip) goes by the last word.
        words = [like_words(p) for p in patterns]
        firsts = sorted({w[0] for w in words if w[0] is not None})
        lasts = sorted({w[-1] for w in words if w[0] is None and w[-1] is not None})
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
                # At most :m + 1 mentions an entity: one in more chunks than :m is left out whatever its degree.
                " links AS (SELECT g.source_id AS chunk_id, ents.id, ents.name, ents.display_name, ents.type_id,"
                "  g.main, count(*) OVER (PARTITION BY ents.id) AS degree FROM ents CROSS JOIN LATERAL"
                "  (SELECT g.source_id, COALESCE((g.properties->>'main')::boolean, false) AS main FROM edges g"
                f"   WHERE g.target_id = ents.id AND {MENTIONS} AND g.dataset_id = ANY(:ds)"
                + (f" AND g.source_id IN (SELECT sc.id FROM chunks sc WHERE sc.dataset_id = ANY(:ds)"
                   f"{self._in_sets('sc.document_id')})" if self.node_sets else "") + " LIMIT :m + 1) g)"
                # The datasets' passages, counted by the BM25 statistics (migration 0020), not chunk by chunk.
                " SELECT l.chunk_id, l.id, l.name, l.display_name, l.main, l.degree, t.name AS type,"
                "  (SELECT COALESCE(sum(s.chunks), 0)::bigint FROM chunk_lex_stats s WHERE s.dataset_id = ANY(:ds)) AS total"
                " FROM links l LEFT JOIN entity_types t ON t.id = l.type_id WHERE l.degree <= :m"
                " ORDER BY l.name, l.chunk_id"
            ),
            {"ds": list(datasets), "n": list(names), "p": list(patterns), "m": max_degree,
             "firsts": firsts, "lasts": lasts, "node_sets": self.node_sets},
        ).mappings()
        return [dict(r) for r in rows]

    def facts_in_chunks(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID],
                        entity_ids: Sequence[uuid.UUID], window: EdgeWindow = EdgeWindow()) -> list[dict]:
        """Visible fact edges read from the chunks that touch the entities."""
        cond, params = window_sql(window)
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.source_id, g.target_id, g.relationship, s.display_name AS source_name,"
                " t.display_name AS target_name FROM edges g"
                " JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
                f" WHERE g.dataset_id = ANY(:ds) AND {NOT_FACT} AND g.provenance && CAST(:c AS uuid[])"
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
                f" WHERE g.dataset_id = ANY(:ds) AND {CONFLICT}"
                " AND (g.source_id = ANY(:n) OR g.target_id = ANY(:n)) ORDER BY g.id"
            ),
            {"ds": list(datasets), "n": list(entity_ids)},
        ).mappings()
        return [dict(r) for r in rows]
