"""BM25 reads for recall: the lexical list (chunks_bm25) and the exact scores fusion asks for
(chunk_scores), over the `chunk_terms` postings and the per-dataset statistics that migration
0020's triggers keep (chunk_lex_stats: N and the lengths' sum; chunk_term_df: each term's df).

The list is exact top-k Okapi BM25 that skips most postings of the question's commonest terms
(MaxScore, Turtle and Flood 1995), in one statement (one snapshot). A term's contribution to a
chunk's score is below its weight qtf·idf (the tf part tf/(tf+K) is below 1). So:
1. a probe: the rarest terms (by weight, up to PROBE_POSTINGS postings) give partial scores;
   their best PROBE_DEPTH chunks are scored exactly; the k-th of those, `lo`, is at most the
   k-th best score of all chunks;
2. the commonest terms whose weights add up to at most `lo` (times SKIP_SHARE) are skipped: a
   chunk holding none of the other terms scores below `lo`, so it cannot be in the top k;
3. the other terms' postings give every chunk's partial score; only chunks whose partial score
   plus the skipped weights reaches `lo` are candidates, and the skipped terms' postings are read
   for those chunks alone (index probes). Every score returned is the full Okapi sum, and the top
   k (ties by chunk id) is what scoring every posting gives.
A question whose terms have at most FULL_READ postings in all is scored from all of them in one
plain read (smaller than the probe would be: every question of a 10k-chunk dataset).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence

from sqlalchemy import text

from engram.adapters.store.search_sql import CHUNK_COLUMNS

PROBE_POSTINGS = 5000  # the probe reads the rarest terms' postings up to about this many
PROBE_DEPTH = 100  # chunks the probe scores exactly (at least 4 x k)
# Skipped terms' weights add up to at most this share of `lo`: skipping every term allowed makes
# most chunks candidates, each probed for every skipped term (100k chunks, 120 questions: list
# p50 26 ms at .6, 43 ms at 1, 70 ms with nothing skipped).
SKIP_SHARE = 0.6
FULL_READ = 20_000  # at most this many postings of all the terms: read them all, no probe


def _okapi(weight: str) -> str:
    """One posting's Okapi BM25 term (p.tf, p.dl, :k1, :b, :avgdl) given the term's weight, qtf
    times the Lucene idf (_weight): the one formula every BM25 read uses."""
    return f"{weight} * p.tf / (p.tf + :k1 * (1 - :b + :b * p.dl / :avgdl))"


def _weight(qtf: str, df: str) -> str:
    """A query term's weight: its frequency in the question times the Lucene idf (N in :n)."""
    return f"{qtf} * ln(1 + (:n - {df} + 0.5) / ({df} + 0.5))"


def idf(n: float, df: float) -> float:
    """The Lucene idf of _weight, in Python."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def probe_terms(weights: dict[str, float], dfs: dict[str, float], budget: int = PROBE_POSTINGS) -> list[str]:
    """The heaviest (rarest) terms whose postings add up to at most `budget` (at least one)."""
    out, total = [], 0.0
    for term in sorted(weights, key=lambda t: (-weights[t], t)):
        if out and total + dfs[term] > budget:
            break
        out.append(term)
        total += dfs[term]
    return out


class LexicalReads:
    conn: object
    node_sets: list[str]

    def _in_sets(self, document_column: str) -> str:  # SearchRepository's
        raise NotImplementedError

    def _posting_filter(self) -> str:
        """Postings of chunks within the node sets, if any."""
        if not self.node_sets:
            return ""
        return (" AND p.chunk_id IN (SELECT sc.id FROM chunks sc WHERE sc.dataset_id = ANY(:ds)"
                f"{self._in_sets('sc.document_id')})")

    def bm25_statistics(self, datasets: Sequence[uuid.UUID], terms: Sequence[str]) -> tuple[float, float, dict]:
        """(N, avgdl, df by term) of the datasets as one collection, one statement: N and avgdl
        from chunk_lex_stats, df from chunk_term_df (within node sets: counted from their postings)."""
        if self.node_sets:
            df_sql = ("SELECT p.term, count(*)::float8 AS df FROM chunk_terms p WHERE p.dataset_id = ANY(:ds)"
                      f" AND p.term = ANY(CAST(:terms AS text[])){self._posting_filter()} GROUP BY p.term")
        else:
            df_sql = ("SELECT term, sum(df)::float8 AS df FROM chunk_term_df WHERE dataset_id = ANY(:ds)"
                      " AND term = ANY(CAST(:terms AS text[])) GROUP BY term")
        row = self.conn.execute(
            text(f"WITH d AS ({df_sql}),"
                 " s AS (SELECT COALESCE(sum(chunks), 0)::float8 AS n, sum(total_length)::float8 AS total"
                 "  FROM chunk_lex_stats WHERE dataset_id = ANY(:ds))"
                 " SELECT s.n, GREATEST(COALESCE(s.total / NULLIF(s.n, 0), 1), 1) AS avgdl,"
                 " (SELECT json_object_agg(term, df) FROM d) AS df FROM s"),
            {"ds": list(datasets), "terms": list(terms), "node_sets": self.node_sets},
        ).one()
        return float(row.n), float(row.avgdl), {t: float(v) for t, v in (row.df or {}).items() if v > 0}

    def chunks_bm25(self, datasets: Sequence[uuid.UUID], terms: dict[str, int], limit: int,
                    k1: float = 1.5, b: float = 0.75) -> list[dict]:
        """The top `limit` chunks by Okapi BM25 (Lucene idf) over the datasets' postings, query
        terms OR-ed, several datasets scored as one collection; exact (see the module's doc).
        Each row carries `bm25_stats`, that collection's (N, avgdl, df by term), for chunk_scores."""
        if not terms:
            return []
        stats = self.bm25_statistics(datasets, list(terms))
        n, avgdl, dfs = stats
        scored = [t for t in terms if dfs.get(t, 0) > 0]
        if not scored:
            return []
        # Few postings in all: read them all (the probe would cost more than it saves).
        full = sum(dfs[t] for t in scored) <= FULL_READ
        probe = scored if full else probe_terms({t: terms[t] * idf(n, dfs[t]) for t in scored}, dfs)
        depth = max(PROBE_DEPTH, 4 * limit)
        rows = [dict(r) for r in self.conn.execute(
            text((self._full_sql() + " SELECT 0 AS bm25_candidates, NULL AS bm25_skipped," if full else
                  self._pruned_sql() + " SELECT (SELECT count(*) FROM cand) AS bm25_candidates,"
                  " (SELECT array_agg(term) FROM r WHERE skip) AS bm25_skipped,")
                 + f" {CHUNK_COLUMNS}, s.score AS rank FROM scored s JOIN chunks c ON c.id = s.chunk_id"
                 " JOIN documents d ON d.id = c.document_id ORDER BY s.score DESC, c.id"),
            {"terms": scored, "qtf": [terms[t] for t in scored], "df": [dfs[t] for t in scored],
             "probe": [t in probe for t in scored], "n": n, "avgdl": avgdl, "ds": list(datasets), "k": limit,
             "m": depth, "share": SKIP_SHARE, "k1": float(k1), "b": float(b), "node_sets": self.node_sets},
        ).mappings()]
        skipped = (rows[0]["bm25_skipped"] or []) if rows else []
        # What the list read, for the benches: postings read in full, and index probes.
        self.bm25_read = {
            "postings": int(sum(dfs[t] for t in probe) + (0 if full else sum(dfs[t] for t in scored if t not in skipped))),
            "probes": 0 if full else depth * (len(scored) - len(probe))
            + (rows[0]["bm25_candidates"] if rows else 0) * len(skipped),
            "skipped": len(skipped)}
        for row in rows:
            row.pop("bm25_candidates"), row.pop("bm25_skipped")
            row["bm25_stats"] = stats
        return rows

    def _full_sql(self) -> str:
        """The CTE `scored` (chunk_id, score) from every posting of the terms: no pruning."""
        return (
            f"WITH q AS (SELECT *, {_weight('qtf', 'df')} AS w FROM unnest(CAST(:terms AS text[]),"
            "  CAST(:qtf AS int[]), CAST(:df AS float8[])) AS u(term, qtf, df)),"
            f" scored AS (SELECT p.chunk_id, sum({_okapi('q.w')}) AS score FROM q"
            f"  JOIN chunk_terms p ON p.term = q.term AND p.dataset_id = ANY(:ds){self._posting_filter()}"
            "  GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT :k)"
        )

    def _pruned_sql(self) -> str:
        """The CTEs through `scored` (chunk_id, score) of the module doc's steps 1-3."""
        okapi, postings = _okapi("q.w"), "chunk_terms p ON p.term = q.term AND p.dataset_id = ANY(:ds)"
        return (
            "WITH q AS MATERIALIZED (SELECT *, sum(w) OVER (ORDER BY w, term) AS cum FROM (SELECT *,"
            f"  {_weight('qtf', 'df')} AS w FROM unnest(CAST(:terms AS text[]), CAST(:qtf AS int[]),"
            "  CAST(:df AS float8[]), CAST(:probe AS boolean[])) AS u(term, qtf, df, probe)) x),"
            # 1. the probe: partial scores of the rarest terms, the best :m scored exactly.
            f" pa AS (SELECT p.chunk_id, sum({okapi}) AS partial FROM q JOIN {postings}{self._posting_filter()}"
            "  WHERE q.probe GROUP BY p.chunk_id),"
            " sa AS MATERIALIZED (SELECT * FROM pa ORDER BY partial DESC, chunk_id LIMIT :m),"
            f" ra AS (SELECT p.chunk_id, sum({okapi}) AS s FROM q JOIN {postings}"
            "  AND p.chunk_id = ANY(CAST((SELECT array_agg(chunk_id) FROM sa) AS uuid[])) WHERE NOT q.probe"
            "  GROUP BY p.chunk_id),"
            " th AS MATERIALIZED (SELECT COALESCE((SELECT sa.partial + COALESCE(ra.s, 0) AS score FROM sa"
            "  LEFT JOIN ra ON ra.chunk_id = sa.chunk_id ORDER BY score DESC LIMIT 1 OFFSET :k - 1), 0) AS lo),"
            # 2. the commonest terms whose weights add up to at most lo are skipped.
            " r AS MATERIALIZED (SELECT q.*, q.cum <= :share * th.lo AS skip FROM q, th),"
            " rb AS (SELECT COALESCE(sum(w) FILTER (WHERE skip), 0) AS bound FROM r),"
            # 3. the others' partial scores; the skipped terms probed for the candidates alone.
            f" pb AS (SELECT p.chunk_id, sum({okapi}) AS partial FROM r q JOIN {postings}{self._posting_filter()}"
            "  WHERE NOT q.skip GROUP BY p.chunk_id),"
            # The margin keeps a chunk whose bound equals the threshold but for rounding.
            " cand AS MATERIALIZED (SELECT pb.* FROM pb, rb, th WHERE pb.partial + rb.bound >= th.lo - 1e-9),"
            f" rest AS (SELECT p.chunk_id, sum({okapi}) AS s FROM r q JOIN {postings}"
            "  AND p.chunk_id = ANY(CAST((SELECT array_agg(chunk_id) FROM cand) AS uuid[])) WHERE q.skip"
            "  GROUP BY p.chunk_id),"
            " scored AS (SELECT cand.chunk_id, cand.partial + COALESCE(rest.s, 0) AS score FROM cand"
            "  LEFT JOIN rest ON rest.chunk_id = cand.chunk_id ORDER BY score DESC, cand.chunk_id LIMIT :k)"
        )

    def bm25_scores(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID], terms: dict[str, int],
                    stats: tuple[float, float, dict], k1: float, b: float) -> tuple[str, dict]:
        """The `scored` CTE (chunk_id, score) of given chunks under given statistics, with its parameters."""
        n, avgdl, dfs = stats
        params = {"terms": list(terms), "qtf": list(terms.values()), "df": [float(dfs.get(t, 0)) for t in terms],
                  "n": float(n), "avgdl": float(avgdl), "ds": list(datasets), "ids": list(chunk_ids),
                  "k1": float(k1), "b": float(b), "node_sets": self.node_sets}
        return (
            f"q AS (SELECT *, {_weight('qtf', 'df')} AS w FROM unnest(CAST(:terms AS text[]), CAST(:qtf AS int[]),"
            "  CAST(:df AS float8[])) AS q(term, qtf, df) WHERE df > 0),"
            f" scored AS (SELECT p.chunk_id, sum({_okapi('q.w')}) AS score"
            "  FROM chunk_terms p JOIN q ON q.term = p.term"
            f"  WHERE p.dataset_id = ANY(:ds) AND p.chunk_id = ANY(:ids){self._posting_filter()} GROUP BY p.chunk_id)"
        ), params
