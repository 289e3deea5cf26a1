"""Chunk lanes: vector, lexical (Postgres full text), summaries and hybrid fusion (SPEC §5)."""

from __future__ import annotations

from engram.models.payloads import RecallItem
from engram.pipelines.recall.context import RecallContext, similarity
from engram.pipelines.recall.ranking import rank_hybrid


def _depth(top_k: int) -> int:
    """How deep each ranked list of a fusion reaches: fusion needs more than the final k."""
    return max(2 * top_k, 20)


def chunk_item(ctx: RecallContext, row: dict, score: float) -> RecallItem:
    return RecallItem(kind="chunk", text=row["text"], score=round(score, 6), provenance=ctx.chunk_provenance(row))


def chunks(ctx: RecallContext) -> list[RecallItem]:
    rows = ctx.search.chunks_by_vector(ctx.datasets, ctx.vector(), ctx.top_k)
    return [chunk_item(ctx, r, similarity(r["distance"])) for r in rows]


def chunks_lexical(ctx: RecallContext) -> list[RecallItem]:
    """Every term (quoted phrases as phrases) first; if nothing matches all, any term."""
    rows = ctx.search.chunks_lexical(ctx.datasets, ctx.question, ctx.top_k)
    if not rows:
        rows = ctx.search.chunks_lexical_any(ctx.datasets, ctx.question, ctx.top_k)
    return [chunk_item(ctx, r, float(r["rank"])) for r in rows]


def summaries(ctx: RecallContext) -> list[RecallItem]:
    rows = ctx.search.summaries_by_vector(ctx.datasets, ctx.vector(), ctx.top_k)
    return [
        RecallItem(kind="summary", text=r["text"], score=similarity(r["distance"]), provenance=ctx.chunk_provenance(r))
        for r in rows
    ]


def hybrid(ctx: RecallContext) -> list[RecallItem]:
    """Reciprocal-rank fusion of chunk-vector, summary-vector and lexical ranks, times the
    importance factor and the truth factor (neutral until a truth hook is given)."""
    depth = _depth(ctx.top_k)
    by_vector = ctx.search.chunks_by_vector(ctx.datasets, ctx.vector(), depth)
    by_summary = ctx.search.summaries_by_vector(ctx.datasets, ctx.vector(), depth)
    by_terms = ctx.search.chunks_lexical_any(ctx.datasets, ctx.question, depth)
    rows = {r["id"]: r for r in by_vector}
    rows.update({r["id"]: r for r in by_terms if r["id"] not in rows})
    summary_chunks = [s["chunk_id"] for s in by_summary]
    missing = [c for c in summary_chunks if c not in rows]
    if missing:
        rows.update(ctx.search.chunks_by_ids(missing))
    importance = {cid: r.get("importance") for cid, r in rows.items()}
    truth = dict(ctx.truth(ctx.question, list(rows.values()))) if ctx.truth else {}
    ranked = rank_hybrid(
        [r["id"] for r in by_vector], summary_chunks, [r["id"] for r in by_terms], ctx.top_k, importance, truth
    )
    return [chunk_item(ctx, rows[cid], score) for cid, score in ranked if cid in rows]
