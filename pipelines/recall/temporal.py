"""TEMPORAL lane: when / before / after / between questions over dated chunks and facts.

The question's dates give the period it asks about (pipelines/dates.query_window reads the
same phrases as extraction: "between 2010 and 2020", "from March 2015 to 2016", "before
1850", "since 2001", "in 2011"); without one ("when was X founded?") any dated passage or fact
qualifies. Chunks are dated by the years they name; facts by their validity intervals. A
question with a period sees every fact valid during it, superseded since or not (unless
as_of / include_history say otherwise). Within the period the nearest by meaning rank first.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from engram.models.payloads import RecallItem
from engram.models.search import EdgeWindow
from engram.pipelines.dates import MAX_WHEN, MIN_WHEN, query_window, window_bounds
from engram.pipelines.recall import graph
from engram.pipelines.recall.context import RecallContext, similarity
from engram.pipelines.recall.lanes import chunk_item


def _bounds(question: str) -> tuple[datetime, datetime]:
    return window_bounds(query_window(question) or (MIN_WHEN, MAX_WHEN))


def window_of(question: str) -> tuple[int, int]:
    """The inclusive years the question asks about ((1, 9999) when it names none)."""
    start, end = _bounds(question)
    return start.year, (end - timedelta(microseconds=1)).year


def temporal(ctx: RecallContext) -> list[RecallItem]:
    asked = query_window(ctx.question)
    start, end = _bounds(ctx.question)
    window = ctx.window
    if asked is not None and window.mode == "current":
        window = EdgeWindow(include_history=True)  # the question names its own time
    vector = ctx.vector()
    first_year, last_year = window_of(ctx.question)
    chunk_rows = ctx.search.chunks_in_years(ctx.datasets, vector, first_year, last_year, ctx.top_k)
    fact_rows = ctx.search.dated_triplets(ctx.datasets, vector, start, end, window,
                                          limit=graph.NEIGHBOURHOOD_FACTOR * ctx.top_k)
    items = [chunk_item(ctx, r, similarity(r["distance"])) for r in chunk_rows]
    items += graph.triplet_items(ctx, graph.score_rows(fact_rows)[: ctx.top_k])
    items.sort(key=lambda i: (-i.score, i.kind, i.text))
    return items[: ctx.top_k]
