"""Passage lanes: dense vector, Okapi BM25, summaries, and their weighted fusion with the
multi-hop graph expansion (SPEC §5; weights come from the search-type registry).

Every lane returns top_k items when the datasets hold that many: BM25 tops up from the dense
list when fewer chunks share a term with the question.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from engram.models.payloads import RecallItem
from engram.pipelines.recall import lexical, multihop
from engram.pipelines.recall.shared_words import without_shared_words
from engram.pipelines.recall.context import RecallContext, similarity
from engram.pipelines.recall.ranking import fuse_scores, rank_weighted

SEEDS = 3  # first-hop passages the graph expansion starts from


def depth(top_k: int) -> int:
    """How deep each ranked list of a fusion reaches: fusion needs more than the final k."""
    return max(3 * top_k, 30)


def chunk_item(ctx: RecallContext, row: dict, score: float, via: list[str] | None = None,
               edge_ids: list[uuid.UUID] | None = None) -> RecallItem:
    provenance = ctx.chunk_provenance(row)
    if edge_ids:
        provenance.edge_ids = list(edge_ids)
    return RecallItem(kind="chunk", text=row["text"], score=round(score, 6), provenance=provenance, via=via or [])


# ------------------------------------------------------------------ ranked lists (rows, best first)


def dense_rows(ctx: RecallContext, k: int, query: str | None = None) -> list[dict]:
    """The nearest chunks to the question (or to `query`, a text standing for it)."""
    return ctx.cached(("dense", k, query),
                      lambda: ctx.keep_rows(ctx.search.chunks_by_vector(ctx.datasets, ctx.vector(query), k)))


def bm25_rows(ctx: RecallContext, k: int) -> list[dict]:
    k1, b = ctx.bm25
    return ctx.cached(("bm25", k), lambda: ctx.keep_rows(ctx.search.chunks_bm25(
        ctx.datasets, lexical.query_terms(ctx.question), k, k1, b)))


def summary_rows(ctx: RecallContext, k: int) -> list[dict]:
    return ctx.cached(("summaries", k), lambda: ctx.search.summaries_by_vector(ctx.datasets, ctx.vector(), k))


# ------------------------------------------------------------------ single lanes


def chunks(ctx: RecallContext) -> list[RecallItem]:
    return [chunk_item(ctx, r, similarity(r["distance"])) for r in dense_rows(ctx, ctx.top_k)]


def chunks_lexical(ctx: RecallContext) -> list[RecallItem]:
    """Okapi BM25, query terms OR-ed; topped up by the nearest chunks (scored below the last
    BM25 hit) when fewer than top_k chunks share a term with the question."""
    rows = bm25_rows(ctx, ctx.top_k)
    items = [chunk_item(ctx, r, float(r["rank"])) for r in rows]
    if len(items) < ctx.top_k:
        seen = {r["id"] for r in rows}
        floor = min((i.score for i in items), default=0.0)
        extra = [r for r in dense_rows(ctx, ctx.top_k + len(rows)) if r["id"] not in seen]
        for n, r in enumerate(extra[: ctx.top_k - len(items)], 1):
            items.append(chunk_item(ctx, r, floor * (1 - 0.01 * n) if floor > 0 else -0.01 * n))
    return items


def summaries(ctx: RecallContext) -> list[RecallItem]:
    return [
        RecallItem(kind="summary", text=r["text"], score=similarity(r["distance"]), provenance=ctx.chunk_provenance(r))
        for r in summary_rows(ctx, ctx.top_k)
    ]


# ------------------------------------------------------------------ fusion


def fused_rows(ctx: RecallContext, weights: Mapping[str, float], extra: Mapping[str, list] | None = None,
               k: int | None = None) -> list[tuple[dict, float, multihop.Bridge | None]]:
    """Weighted RRF of the ranked lists named in `weights` (summaries, graph, any `extra` ones,
    and dense and BM25 fused by their scores into one `passages` list weighing both), times
    importance and truth. Returns (row, score, bridge) best first."""
    k = k or ctx.top_k
    n = depth(k)
    rows: dict[uuid.UUID, dict] = {}
    lists: dict[str, list[uuid.UUID]] = {}
    scored: dict[str, list[tuple[uuid.UUID, float]]] = {}
    # Reads that need no question vector come first: the vector is computed meanwhile (prefetch_vector).
    bm25_stats = None
    query = None  # the text the dense side embeds, when it is not the question (shared_words.py)
    if weights.get("bm25"):
        found = bm25_rows(ctx, n)
        bm25_stats = found[0].get("bm25_stats") if found else None  # N, avgdl, df: for the exact scores
        rows.update({r["id"]: r for r in found})
        lists["bm25"] = [r["id"] for r in found]
        scored["bm25"] = [(r["id"], float(r["rank"])) for r in found]
        query = _dense_query(ctx, bm25_stats)

    def dense() -> list[uuid.UUID]:
        if "dense" not in lists:
            found = dense_rows(ctx, n, query)
            rows.update({r["id"]: r for r in found})  # dense rows first: they carry the distance
            lists["dense"] = [r["id"] for r in found]
            scored["dense"] = [(r["id"], similarity(r["distance"])) for r in found]
        return lists["dense"]

    bridges: dict[uuid.UUID, multihop.Bridge] = {}
    if weights.get("graph"):
        # The walk starts from the dense list's best passages (why: bench/NOTES.md).
        def first_hop() -> list[uuid.UUID]:
            if weights.get("dense"):
                return dense()[:SEEDS]
            return [cid for cid, _ in rank_weighted(dict(lists), weights, k)][:SEEDS]

        for bridge in multihop.expand(ctx, first_hop, n):
            bridges[bridge.chunk_id] = bridge
    if weights.get("dense"):
        dense()
    if weights.get("dense") and weights.get("bm25") and not bridges:
        # Dense and BM25 scores fuse first (ranking.fuse_scores), as one list weighing both; a
        # passage one list left out is scored exactly for it (one read for all of them). With the
        # walk in play they stay rank lists: its weight was set against them as such.
        _complete_scores(ctx, scored, bm25_stats, query)
        del lists["dense"], lists["bm25"]
        lists["passages"] = fuse_scores(scored, weights)
        weights = {**weights, "passages": weights["dense"] + weights["bm25"]}
    if weights.get("summaries"):
        lists["summaries"] = [s["chunk_id"] for s in summary_rows(ctx, n)]
    if bridges:
        lists["graph"] = list(bridges)
    for name, ids in (extra or {}).items():
        lists[name] = ids
    return _ranked_rows(ctx, lists, weights, k, rows, bridges)


def _ranked_rows(ctx: RecallContext, lists: dict[str, list[uuid.UUID]], weights: Mapping[str, float], k: int,
                 rows: dict[uuid.UUID, dict], bridges: dict[uuid.UUID, multihop.Bridge],
                 ) -> list[tuple[dict, float, multihop.Bridge | None]]:
    """The fused lists ranked (times importance and truth), with the rows not read yet read in one go."""
    missing = [cid for ids in lists.values() for cid in ids if cid not in rows]
    if missing:
        rows.update(ctx.chunk_rows(missing))
    importance = {cid: r.get("importance") for cid, r in rows.items()}
    truth = dict(ctx.truth(ctx.question, list(rows.values()), ctx.vector)) if ctx.truth else {}
    ranked = rank_weighted(lists, weights, k, importance, truth,
                           scores={"graph": multihop.strengths(bridges.values())} if bridges else None)
    return [(rows[cid], score, bridges.get(cid)) for cid, score in ranked if cid in rows]


def _dense_query(ctx: RecallContext, bm25_stats: tuple | None) -> str | None:
    """The question without the words nearly every searched chunk holds (by the BM25 list's N and
    df), for the dense side to embed; None when that is the question itself."""
    if bm25_stats is None:
        return None
    query = without_shared_words(ctx.question, bm25_stats[0], bm25_stats[2])
    return None if query == ctx.question else query


def _complete_scores(ctx: RecallContext, scored: dict[str, list[tuple[uuid.UUID, float]]],
                     bm25_stats: tuple | None = None, query: str | None = None) -> None:
    dense, bm25 = dict(scored["dense"]), dict(scored["bm25"])
    missing = [cid for cid in dict.fromkeys([*dense, *bm25]) if cid not in dense or cid not in bm25]
    k1, b = ctx.bm25
    for cid, (distance, score) in ctx.search.chunk_scores(ctx.datasets, missing, ctx.vector(query),
                                                         lexical.query_terms(ctx.question), k1, b,
                                                         stats=bm25_stats).items():
        if cid not in dense and distance is not None:
            scored["dense"].append((cid, similarity(distance)))
        if cid not in bm25:
            scored["bm25"].append((cid, score))


def hybrid(ctx: RecallContext) -> list[RecallItem]:
    """Dense, BM25 and graph-expansion ranks fused with the search type's weights."""
    return [chunk_item(ctx, row, score, *(multihop.provenance(bridge) if bridge else ((), ())))
            for row, score, bridge in fused_rows(ctx, ctx.weights or {"dense": 1.0, "bm25": 1.0})]
