"""Time after ranking, for every lane: facts of functional relationships show their validity
("mayor of Springfield (2015–2022; again since 2026)"), and a passage stating a fact that is no longer valid at the
asked time is flagged (which fact, replaced by what) and ranked below the passages that state
a fact still valid (current answers, as_of); with include_history passages are flagged only.

A separate step so lanes stay about relevance: it reads the intervals supersession computed
(pipelines/maintenance/supersession.py) through the search port and reorders nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from engram.models.payloads import RecallItem
from engram.pipelines import facts
from engram.pipelines.dates import When, query_window, render_spans, stored, utc, window_bounds
from engram.pipelines.recall.context import RecallContext

PASSAGES = ("chunk", "summary")


@dataclass(frozen=True)
class Focus:
    """The time a question is about: an instant (now, as_of) or a period [start, end)."""

    start: datetime
    end: datetime | None = None  # None: the instant `start`

    def holds(self, starts: datetime | None, ends: datetime | None) -> bool:
        began = starts is None or (starts <= self.start if self.end is None else starts < self.end)
        return began and (ends is None or ends > self.start)

    def over(self, ends: datetime | None) -> bool:
        return ends is not None and ends <= self.start


def _spans(intervals: Iterable[dict]) -> list[tuple[When | None, When | None, bool]]:
    """An edge's intervals as merged spans (start, end, open), oldest first."""
    spans: list[list] = []
    for i in sorted(intervals, key=lambda r: (r.get("starts_at") or r.get("valid_from") or datetime.min.replace(
            tzinfo=UTC), str(r["id"]))):
        if i.get("valid_from") is None and i.get("valid_to") is not None:
            # An end stated alone spans what it closed (pipelines/intervals.py), else all before it.
            if i.get("starts_at") and i.get("ends_at") and utc(i["ends_at"]) <= utc(i["starts_at"]):
                continue  # it added no time
            start = stored(i.get("starts_at"))
        else:
            start = stored(i.get("valid_from"), i.get("valid_from_precision")) or stored(
                i.get("asserted_at"), i.get("asserted_precision"))
        # A computed end (the successor's start) only for a fact whose start is known: an undated
        # one ends when Engram learned of its successor, which is no date worth showing.
        end = stored(i.get("valid_to"), i.get("valid_to_precision")) or (
            stored(i.get("ends_at")) if start is not None else None)
        if start is not None and i.get("starts_at") and i.get("ends_at") and utc(i["ends_at"]) <= utc(i["starts_at"]):
            end = None  # never held (over before it began): keep its start only
        open_ = end is None and not i.get("ended")
        if spans and start is not None and spans[-1][0] is not None and (
                spans[-1][1] is None and spans[-1][2] or (spans[-1][1] is not None and start.at <= spans[-1][1].at)):
            last = spans[-1]  # overlaps or touches the previous span: one stretch of time
            if last[1] is not None and (end is None or end.at > last[1].at):
                last[1], last[2] = end, open_
            continue
        spans.append([start, end, open_])
    return [(s, e, o) for s, e, o in spans]


def period(intervals: Iterable[dict]) -> str:
    """"2015–2022; again since 2026"; "" when no interval has a date or a tense."""
    return render_spans(_spans(intervals))


def dated_fact_text(source: str, relationship: str, target: str, starts: datetime | None = None,
              precision: str | None = None) -> str:
    text = facts.fact_text(source, relationship, target)
    since = stored(starts, precision)
    return f"{text} (since {since.text()})" if since else text


def focus_of(ctx: RecallContext, now: datetime | None = None) -> Focus:
    """as_of, else the period the question names ("who was mayor in 2018"), else now."""
    if ctx.window.as_of is not None:
        return Focus(utc(ctx.window.as_of))
    asked = query_window(ctx.question)
    if asked is not None:
        return Focus(*window_bounds(asked))
    return Focus(utc(now or datetime.now(UTC)))


def apply(ctx: RecallContext, items: list[RecallItem], now: datetime | None = None,
          focus: Focus | None = None) -> list[RecallItem]:
    """Items with periods on facts and passages flagged; reordered unless history is asked."""
    if not items:
        return items
    focus = focus or focus_of(ctx, now)
    _annotate_facts(ctx, items)
    tiers = _flag_passages(ctx, items, focus)
    if ctx.window.mode == "history" or not any(tiers.values()):
        return items
    order = {id(item): n for n, item in enumerate(items)}
    return sorted(items, key=lambda i: (tiers.get(id(i), 0), order[id(i)]))


def _annotate_facts(ctx: RecallContext, items: list[RecallItem]) -> None:
    facts = [i for i in items if i.kind == "triplet" and i.provenance.edge_ids]
    if not facts:
        return
    intervals = ctx.search.fact_intervals([i.provenance.edge_ids[0] for i in facts])
    for item in facts:
        # Periods of judged (functional) facts only: "Dam built in 1962" needs no "(from 1962)".
        judged = [i for i in intervals.get(item.provenance.edge_ids[0], []) if i.get("functional")]
        text = period(judged)
        if text and not item.text.endswith(")"):
            item.text = f"{item.text} ({text})"


def _flag_passages(ctx: RecallContext, items: list[RecallItem], focus: Focus) -> dict[int, int]:
    """Tier per passage: 0 states a fact valid at the focus (or none judged), 1 only facts of
    another time, 2 a fact it states as ongoing that has since been replaced or ended."""
    passages = [i for i in items if i.kind in PASSAGES and i.provenance.chunk_ids]
    if not passages:
        return {}
    by_chunk: dict = {}
    for row in ctx.search.chunk_assertions(ctx.datasets, [c for i in passages for c in i.provenance.chunk_ids]):
        by_chunk.setdefault(row["chunk_id"], []).append(row)
    tiers: dict[int, int] = {}
    for item in passages:
        rows = [r for c in item.provenance.chunk_ids for r in by_chunk.get(c, [])]
        if not rows:
            continue
        holding = [r for r in rows if focus.holds(_t(r["starts_at"]), _t(r["ends_at"]))]
        stale = [r for r in rows if r["valid_to"] is None and not r["ended"] and focus.over(_t(r["ends_at"]))]
        if stale:
            item.superseded = True
            item.superseded_facts = [_stale(r) for r in stale]
        tiers[id(item)] = 0 if holding else 2 if stale else 1
    return tiers


def _t(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def _stale(row: dict) -> dict:
    starts = row["valid_from"] or row["starts_at"]
    fact = dated_fact_text(row["source_name"], row["relationship"], row["target_name"], starts,
                           row["valid_from_precision"] if row["valid_from"] else None)
    by = None
    if row["successor_edge_id"] is not None:
        by = dated_fact_text(row["successor_source"], row["successor_relationship"], row["successor_target"],
                             row["successor_from"], row["successor_precision"])
    ended = stored(row["ends_at"])
    return {"fact": fact, "by": by, "until": ended.text() if ended else None, "edge_id": str(row["edge_id"]),
            "by_edge_id": str(row["successor_edge_id"]) if row["successor_edge_id"] else None}
