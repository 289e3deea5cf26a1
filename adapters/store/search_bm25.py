"""BM25 reads for recall: the lexical list (chunks_bm25) and the exact scores fusion asks for
(chunk_scores), over the `chunk_terms` postings and the per-dataset statistics that migration
0020's triggers keep (chunk_lex_stats: N and the lengths' sum; chunk_term_df: each term's df).

The list is exact top-k Okapi BM25 that reads only the postings it must (MaxScore, Turtle and
Flood 1995): a term's contribution to a chunk's score is below qtf·idf (the tf part tf/(tf+K) is
below 1), so the commonest terms whose bounds add up to less than the k-th best score cannot
lift a chunk holding none of the rarer terms into the top k. Their postings are read only for
the chunks the rarer terms found, and only for those whose bound can still reach the k-th best
partial score; every score returned is the full Okapi sum, and ranking equals scoring every
posting (ties by chunk id). The common terms are chosen from a guess of the k-th score; when the
list's k-th score is below their bound, the list is read again with fewer of them (at most twice).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence

from sqlalchemy import text

from engram.adapters.store.search_sql import _CHUNK_COLUMNS

# First guess of the k-th best score, as a share of the best single term's bound: the commonest
# terms whose bounds add up to less are read only for the chunks the others found.
GUESS = 0.5


def _okapi(qtf: str, df: str, n: str, avgdl: str) -> str:
    """One posting's Okapi BM25 term (Lucene idf; p.tf, p.dl, :k1, :b), given where the query
    term frequency, df, N and avgdl come from: the one formula every BM25 read uses."""
    return (f"{qtf} * ln(1 + ({n} - {df} + 0.5) / ({df} + 0.5))"
            f" * p.tf / (p.tf + :k1 * (1 - :b + :b * p.dl / {avgdl}))")


def idf(n: float, df: float) -> float:
    """The Lucene idf _okapi uses (the same expression, in Python, for the terms' bounds)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def skipped_terms(bounds: dict[str, float], threshold: float) -> list[str]:
    """The commonest terms (smallest bound first) whose bounds add up to at most `threshold`."""
    out, total = [], 0.0
    for term, bound in sorted(bounds.items(), key=lambda kv: (kv[1], kv[0])):
        if total + bound > threshold:
            break
        out.append(term)
        total += bound
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
        n, _, dfs = stats
        bounds = {t: qtf * idf(n, dfs[t]) for t, qtf in terms.items() if dfs.get(t, 0) > 0}
        if not bounds:
            return []
        skipped = skipped_terms(bounds, GUESS * max(bounds.values()))
        # What the list read, for the benches: postings in full, probes of skipped terms, passes.
        self.bm25_read = {"postings": 0, "probes": 0, "passes": 0}
        while True:
            rows = self._bm25_top(datasets, terms, stats, skipped, limit, k1, b)
            candidates = rows[0].pop("bm25_candidates") if rows else 0
            for row in rows[1:]:
                row.pop("bm25_candidates")
            self.bm25_read["postings"] += int(sum(dfs[t] for t in bounds if t not in skipped))
            self.bm25_read["probes"] += candidates * len(skipped)
            self.bm25_read["passes"] += 1
            bound = sum(bounds[t] for t in skipped)
            kth = float(rows[-1]["rank"]) if len(rows) == limit else 0.0
            # A chunk holding only skipped terms scores below their bound (each tf part < 1).
            if not skipped or kth >= bound:
                break
            skipped = skipped_terms({t: bounds[t] for t in skipped}, kth)
        for row in rows:
            row["bm25_stats"] = stats
        return rows

    def _bm25_top(self, datasets: Sequence[uuid.UUID], terms: dict[str, int], stats: tuple[float, float, dict],
                  skipped: Sequence[str], limit: int, k1: float, b: float) -> list[dict]:
        """The top `limit` of the chunks holding a term not skipped, exactly scored: partial
        scores from those terms' postings, then the skipped terms' postings of the chunks whose
        partial score plus the skipped terms' bound reaches the `limit`-th partial score."""
        n, avgdl, dfs = stats
        scored_terms = [t for t in terms if dfs.get(t, 0) > 0]
        read = [t not in skipped for t in scored_terms]
        bound = sum(terms[t] * idf(n, dfs[t]) for t in skipped)
        okapi = _okapi("q.qtf", "q.df", ":n", ":avgdl")
        rows = self.conn.execute(
            text(
                "WITH q AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:qtf AS int[]), CAST(:df AS float8[]),"
                "  CAST(:read AS boolean[])) AS q(term, qtf, df, read)),"
                f" part AS MATERIALIZED (SELECT p.chunk_id, sum({okapi}) AS partial FROM chunk_terms p"
                f"  JOIN q ON q.term = p.term AND q.read WHERE p.dataset_id = ANY(:ds){self._posting_filter()}"
                "  GROUP BY p.chunk_id),"
                " kth AS (SELECT COALESCE((SELECT partial FROM part ORDER BY partial DESC"
                "  LIMIT 1 OFFSET :k - 1), 0) AS partial),"
                # The margin keeps a chunk whose bound equals the threshold but for rounding.
                " cand AS MATERIALIZED (SELECT part.* FROM part, kth WHERE part.partial + :bound >= kth.partial - 1e-9),"
                f" rest AS (SELECT p.chunk_id, sum({okapi}) AS s FROM q JOIN chunk_terms p ON p.term = q.term"
                "  AND p.dataset_id = ANY(:ds) AND p.chunk_id = ANY(CAST((SELECT array_agg(chunk_id) FROM cand) AS uuid[]))"
                "  WHERE NOT q.read GROUP BY p.chunk_id),"
                " scored AS (SELECT cand.chunk_id, cand.partial + COALESCE(rest.s, 0) AS score FROM cand"
                "  LEFT JOIN rest ON rest.chunk_id = cand.chunk_id ORDER BY score DESC, cand.chunk_id LIMIT :k)"
                f" SELECT {_CHUNK_COLUMNS}, s.score AS rank, (SELECT count(*) FROM cand) AS bm25_candidates FROM scored s JOIN chunks c ON c.id = s.chunk_id"
                " JOIN documents d ON d.id = c.document_id ORDER BY s.score DESC, c.id"
            ),
            {"terms": scored_terms, "qtf": [terms[t] for t in scored_terms], "df": [dfs[t] for t in scored_terms],
             "read": read, "bound": bound, "n": n, "avgdl": avgdl, "ds": list(datasets), "k": limit,
             "k1": float(k1), "b": float(b), "node_sets": self.node_sets},
        ).mappings()
        return [dict(r) for r in rows]

    def bm25_scores(self, datasets: Sequence[uuid.UUID], chunk_ids: Sequence[uuid.UUID], terms: dict[str, int],
                    stats: tuple[float, float, dict], k1: float, b: float) -> tuple[str, dict]:
        """The `scored` CTE (chunk_id, score) of given chunks under given statistics, with its parameters."""
        n, avgdl, dfs = stats
        params = {"terms": list(terms), "qtf": list(terms.values()), "df": [float(dfs.get(t, 0)) for t in terms],
                  "n": float(n), "avgdl": float(avgdl), "ds": list(datasets), "ids": list(chunk_ids),
                  "k1": float(k1), "b": float(b), "node_sets": self.node_sets}
        return (
            "q AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:qtf AS int[]),"
            "  CAST(:df AS float8[])) AS q(term, qtf, df) WHERE df > 0),"
            f" scored AS (SELECT p.chunk_id, sum({_okapi('q.qtf', 'q.df', ':n', ':avgdl')}) AS score"
            "  FROM chunk_terms p JOIN q ON q.term = p.term"
            f"  WHERE p.dataset_id = ANY(:ds) AND p.chunk_id = ANY(:ids){self._posting_filter()} GROUP BY p.chunk_id)"
        ), params
