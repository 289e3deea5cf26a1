"""TEMPORAL lane: when / before / after / between questions over dated chunks and facts.

The query's years give an inclusive window (router.year_range: "between 2010 and 2020",
"before 1990", "in 2011"); without a year ("when was X founded?") any dated passage or fact
qualifies. Chunks are dated by the years they name; facts by valid_from or a year in their
own text. Within the window the nearest by meaning rank first.
"""

from __future__ import annotations

from engram.models.payloads import RecallItem
from engram.pipelines.recall import graph
from engram.pipelines.recall.context import RecallContext, similarity
from engram.pipelines.recall.lanes import chunk_item
from engram.pipelines.recall.router import MAX_YEAR, MIN_YEAR, year_range


def window_of(question: str) -> tuple[int, int]:
    return year_range(question) or (MIN_YEAR, MAX_YEAR)


def temporal(ctx: RecallContext) -> list[RecallItem]:
    first, last = window_of(ctx.question)
    vector = ctx.vector()
    chunk_rows = ctx.search.chunks_in_years(ctx.datasets, vector, first, last, ctx.top_k)
    fact_rows = ctx.search.dated_triplets(ctx.datasets, vector, first, last, ctx.window,
                                          limit=graph.NEIGHBOURHOOD_FACTOR * ctx.top_k)
    items = [chunk_item(ctx, r, similarity(r["distance"])) for r in chunk_rows]
    items += graph.triplet_items(ctx, graph.score_rows(fact_rows)[: ctx.top_k])
    items.sort(key=lambda i: (-i.score, i.kind, i.text))
    return items[: ctx.top_k]
