"""triplet_enrichment: one embeddable sentence per entity-to-entity edge."""

from __future__ import annotations

from engram.pipelines.facts import fact_text


# ------------------------------------------------------------------ the stage


def gate(uow, ctx):
    if not uow.improve.changed_edges(ctx.dataset_id, limit=1):
        return ("already_completed", "no edge changed since the last enrichment")
    return None


def load(uow, ctx) -> list[dict]:
    return uow.improve.changed_edges(ctx.dataset_id)


def compute(edges: list[dict], ctx) -> dict:
    texts = [fact_text(e["source"], e["relationship"], e["target"]) for e in edges]
    return {"texts": texts, "vectors": ctx.ports.embedder().embed(texts) if texts else []}


def persist(uow, ctx, edges: list[dict], result: dict) -> dict:
    uow.improve.upsert_triplets(ctx.dataset_id, [dict(e, text=t, vector=v)
                                                 for e, t, v in zip(edges, result["texts"], result["vectors"])])
    if edges:
        uow.improve.set_triplet_watermark(ctx.dataset_id, max(e["updated_at"] for e in edges))
    return {"triplets": len(edges)}
