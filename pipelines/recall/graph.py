"""Graph lanes: triplets through edge-text and entity vectors, the depth-1 neighbourhood,
bounded context extension, graph summaries; with supersession and conflicts honoured.

Which edges are visible (current / as_of / history) is the search port's job, given
ctx.window; here we score, expand, attach conflicts and build items.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence

from engram.models.payloads import Provenance, RecallItem
from engram.pipelines.facts import row_fact_text
from engram.pipelines.recall.context import RecallContext, similarity

EDGE_WEIGHT = 0.6  # the fact's own text matters most ...
ENDPOINT_WEIGHT = 0.2  # ... then each endpoint's name
UNSPECIFIC = "related_to"  # what extraction says when it found no relationship words
UNSPECIFIC_FACTOR = 0.9
EXTENSION_DECAY = 0.85  # per round of context extension: farther facts rank lower
MAX_EXTENSION_ROUNDS = 3
NEIGHBOURHOOD_FACTOR = 10  # triplets read per requested result when expanding
_WORDS = re.compile(r"[^0-9a-z]+")


# ------------------------------------------------------------------ scoring and rendering


def triplet_score(edge_sim: float | None, source_sim: float | None, target_sim: float | None,
                  relationship: str = "") -> float:
    """Weighted similarity of the question to the fact text and to both endpoint names."""
    score = EDGE_WEIGHT * (edge_sim or 0.0) + ENDPOINT_WEIGHT * ((source_sim or 0.0) + (target_sim or 0.0))
    return score * (UNSPECIFIC_FACTOR if relationship == UNSPECIFIC else 1.0)


def _norm(text: str) -> str:
    return " ".join(_WORDS.sub(" ", text.lower().replace("_", " ")).split())


def same_fact(row: dict, fact_text: str | None) -> bool:
    """Whether a rendered fact (any wording that keeps source, relationship and target in
    order, e.g. "Alice is CEO of Acme" for alice -ceo_of-> acme) states this triplet."""
    text = f" {_norm(fact_text or '')} "
    pos = 0
    for part in (row["source_name"], row["relationship"], row["target_name"]):
        needle = f" {_norm(part)} "
        found = text.find(needle, pos)
        if found < 0:
            return False
        pos = found + len(needle) - 1
    return True


def conflicts_for(row: dict, contradictions: Iterable[dict]) -> list[dict]:
    """The conflicts of one triplet: `contradicts` edges naming it as one of their facts, or
    joining exactly its two entities. Each gives the other fact, the reason and confidence."""
    ends = {row["source_id"], row["target_id"]}
    out = []
    for c in contradictions:
        props = c.get("properties") or {}
        first, second = props.get("first_fact"), props.get("second_fact")
        edge_ids = (props.get("first_edge_id"), props.get("second_edge_id"))
        if all(edge_ids):  # the check recorded which edges it judged: match exactly
            if str(row["id"]) not in edge_ids:
                continue
            other = second if str(row["id"]) == edge_ids[0] else first
            out.append({"fact": other, "reason": props.get("reason"), "confidence": props.get("confidence"),
                        "edge_id": str(c["id"])})
            continue
        if not ends & {c["source_id"], c["target_id"]}:
            continue
        is_first, is_second = same_fact(row, first), same_fact(row, second)
        if is_first != is_second:
            other = second if is_first else first
        elif ends == {c["source_id"], c["target_id"]}:
            other = second if is_first or _overlap(row, first) >= _overlap(row, second) else first
        else:
            continue
        out.append({"fact": other, "reason": props.get("reason"), "confidence": props.get("confidence"),
                    "edge_id": str(c["id"])})
    return out


def _overlap(row: dict, fact: str | None) -> int:
    return len(set(_norm(row_fact_text(row)).split()) & set(_norm(fact or "").split()))


def score_rows(rows: Iterable[dict], factor: float = 1.0) -> list[dict]:
    for r in rows:
        r["score"] = factor * triplet_score(r.get("edge_sim"), r.get("source_sim"), r.get("target_sim"),
                                            r["relationship"])
    return sorted(rows, key=_rank)


def _rank(row: dict) -> tuple:
    return (-row["score"], row_fact_text(row), str(row["id"]))


def triplet_items(ctx: RecallContext, rows: Sequence[dict]) -> list[RecallItem]:
    """Items for scored rows, with document provenance and attached conflicts."""
    if not rows:
        return []
    entity_ids = {r["source_id"] for r in rows} | {r["target_id"] for r in rows}
    contradictions = ctx.search.contradictions(ctx.datasets, list(entity_ids))
    first_chunks = list(dict.fromkeys(r["provenance"][0] for r in rows if r["provenance"]))
    # The passage each fact was read from travels with it: completions see the source text.
    documents = ctx.chunk_rows(first_chunks) if first_chunks else {}
    items = []
    for r in rows:
        doc = documents.get(r["provenance"][0], {}) if r["provenance"] else {}
        items.append(RecallItem(
            kind="triplet",
            text=row_fact_text(r),
            score=round(r["score"], 6),
            superseded=bool(r["superseded"]),
            conflicts=conflicts_for(r, contradictions),
            passage=doc.get("text"),
            provenance=Provenance(dataset=ctx.scope.name(r["dataset_id"]), document_id=doc.get("document_id"),
                                  data_item_id=doc.get("data_item_id"), title=doc.get("title"),
                                  chunk_ids=list(r["provenance"]), edge_ids=[r["id"]]),
        ))
    return items


# ------------------------------------------------------------------ retrieval


def _candidates(ctx: RecallContext, via_entities: bool) -> list[dict]:
    vector = ctx.vector()
    edge_hits = ctx.search.edges_by_vector(ctx.datasets, vector, 2 * ctx.top_k, ctx.window)
    entity_hits = ctx.search.entities_by_vector(ctx.datasets, vector, max(3, ctx.top_k // 2)) if via_entities else []
    if not edge_hits and not entity_hits:
        return []
    rows = ctx.search.triplets(
        ctx.datasets, vector, edge_ids=[h["id"] for h in edge_hits], entity_ids=[h["id"] for h in entity_hits],
        window=ctx.window, limit=NEIGHBOURHOOD_FACTOR * ctx.top_k,
    )
    return score_rows(rows)


def triplet_rows(ctx: RecallContext) -> list[dict]:
    """Facts nearest by edge text only (TRIPLET_COMPLETION)."""
    return _candidates(ctx, via_entities=False)[: ctx.top_k]


def graph_rows(ctx: RecallContext) -> list[dict]:
    """Facts by edge text plus the depth-1 neighbourhood of the nearest entities."""
    return _candidates(ctx, via_entities=True)[: ctx.top_k]


def extended_rows(ctx: RecallContext) -> list[dict]:
    """Graph rows, then expand from the entities they reach while new facts appear, at most
    MAX_EXTENSION_ROUNDS rounds and NEIGHBOURHOOD_FACTOR·top_k facts read (each round's scores
    decay). Returns top_k: the best half of the first neighbourhood, then the best facts reached
    only through expansion (the path between two entities), so the decay does not cut them."""
    seen = {r["id"]: r for r in _candidates(ctx, via_entities=True)[: ctx.top_k]}
    base = set(seen)
    expanded: set[uuid.UUID] = set()
    frontier = list(seen.values())
    for round_ in range(1, MAX_EXTENSION_ROUNDS + 1):
        entities = {e for r in frontier for e in (r["source_id"], r["target_id"])} - expanded
        if not entities or len(seen) >= NEIGHBOURHOOD_FACTOR * ctx.top_k:
            break
        expanded |= entities
        rows = ctx.search.triplets(ctx.datasets, ctx.vector(), entity_ids=list(entities), window=ctx.window,
                                   limit=NEIGHBOURHOOD_FACTOR * ctx.top_k)
        fresh = score_rows([r for r in rows if r["id"] not in seen], EXTENSION_DECAY**round_)[: ctx.top_k]
        if not fresh:
            break
        seen.update({r["id"]: r for r in fresh})
        frontier = fresh
    first = sorted(seen.values(), key=_rank)
    reached = [r for r in first if r["id"] not in base]
    head = [r for r in first if r["id"] in base][: max(1, ctx.top_k - min(len(reached), ctx.top_k // 2))]
    return (head + reached)[: ctx.top_k]


def triplet_completion(ctx: RecallContext) -> list[RecallItem]:
    return triplet_items(ctx, triplet_rows(ctx))


def graph_completion(ctx: RecallContext) -> list[RecallItem]:
    return triplet_items(ctx, graph_rows(ctx))


def context_extension(ctx: RecallContext) -> list[RecallItem]:
    return triplet_items(ctx, extended_rows(ctx))


def graph_summary(ctx: RecallContext) -> list[RecallItem]:
    """Summaries of the chunks behind the best facts (scored by those facts) and the nearest
    summaries, merged with the facts themselves."""
    rows = graph_rows(ctx)
    by_chunk: dict[uuid.UUID, float] = {}
    for r in rows:
        for chunk in r["provenance"]:
            by_chunk[chunk] = max(by_chunk.get(chunk, 0.0), r["score"])
    summary_rows = {s["id"]: s for s in ctx.search.summaries_by_vector(ctx.datasets, ctx.vector(), ctx.top_k)}
    if by_chunk:
        summary_rows.update({s["id"]: s for s in ctx.search.summaries_of_chunks(list(by_chunk), ctx.vector())})
    summaries = [
        RecallItem(kind="summary", text=s["text"], provenance=ctx.chunk_provenance(s),
                   score=round(max(by_chunk.get(s["chunk_id"], 0.0), similarity(s["distance"])), 6))
        for s in summary_rows.values()
    ]
    items = summaries + triplet_items(ctx, rows)
    items.sort(key=lambda i: (-i.score, i.kind, i.text))
    return items[: ctx.top_k]
