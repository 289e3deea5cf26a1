"""Temporal supersession of functional relationships over validity intervals (SPEC §7.2 + Beyond).

A functional relationship is single-valued at one end: "source" (one current target per
source, e.g. company -ceo_of-> person) or "target" (one current source per target, e.g.
person -mayor_of-> city). Every statement of a fact is an interval, spanned as
pipelines/intervals.py reads its own edge's statements (dates from the text; an end stated
alone closes the edge's open statement, a later start reopens it).

The holder of a group at time t is the interval containing t with the latest start (ties: the
one learned later, then the id). An interval holds until the holder at some moment is another
value (its successor: it is superseded from that moment) or nobody. An edge is current when
one of its intervals still holds; otherwise it is history, superseded by the successor of its
last interval if there was one. Nothing is deleted; only computed columns change, so a
second pass writes nothing and the outcome does not depend on the order documents arrived in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from engram.pipelines.dates import utc
from engram.pipelines.ids import interval_id, normalise_relationship
from engram.pipelines.intervals import Statement, by_edge

End = Literal["source", "target"]
_ENDS: frozenset[str] = frozenset({"source", "target"})
_MIN = datetime(1, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class EdgeFact:
    id: Any
    source_id: Any
    target_id: Any
    relationship: str
    updated_at: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


def as_edge_fact(edge: EdgeFact | Mapping[str, Any]) -> EdgeFact:
    """Accept an EdgeFact or a plain dict (relationship may be spelled relationship_name)."""
    if isinstance(edge, EdgeFact):
        return edge
    updated = edge.get("updated_at")
    return EdgeFact(
        id=edge["id"],
        source_id=edge["source_id"],
        target_id=edge["target_id"],
        relationship=edge.get("relationship") or edge.get("relationship_name") or "",
        updated_at=updated.isoformat() if isinstance(updated, datetime) else updated,
        properties=dict(edge.get("properties") or {}),
    )


def normalise_functional(spec: Iterable[str] | Mapping[str, str] | None) -> dict[str, End]:
    """List → every relationship source-functional; dict → rel: "source" | "target"."""
    if not spec:
        return {}
    if isinstance(spec, str):
        raise ValueError("functional relationships must be a list or a dict, not a string")
    if isinstance(spec, Mapping):
        out: dict[str, End] = {}
        for rel, end in spec.items():
            end_value = str(end).strip().lower()
            if end_value not in _ENDS:
                raise ValueError(f"functional relationship {rel!r}: end must be 'source' or 'target', got {end!r}")
            out[normalise_relationship(rel)] = end_value  # type: ignore[assignment]
        return out
    return {normalise_relationship(rel): "source" for rel in spec}


def reason_for(relationship: str) -> str:
    return f"superseded by a more recent '{relationship}' assertion"


@dataclass(frozen=True)
class Assertion:
    """One interval of one edge: what the text stated and what the last pass computed."""

    id: Any
    edge_id: Any
    source_id: Any
    target_id: Any
    relationship: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    ended: bool = False
    asserted: datetime | None = None
    learned: datetime | None = None
    # As stored by the previous pass (compared so an unchanged verdict is not rewritten).
    functional: bool = False
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    superseded_by: Any = None


@dataclass(frozen=True)
class IntervalVerdict:
    id: Any
    starts_at: datetime | None  # None: unknown (an end stated alone that closed nothing)
    ends_at: datetime | None
    superseded_by: Any  # the successor interval's id, or None


@dataclass(frozen=True)
class EdgeVerdict:
    id: Any
    superseded: bool
    superseded_by: Any  # the successor's edge id
    supersession_reason: str | None
    valid_from: datetime | None
    valid_to: datetime | None


@dataclass
class Judgement:
    intervals: list[IntervalVerdict]
    edges: list[EdgeVerdict]


def _opt(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def _statement(a: Assertion) -> Statement:
    return Statement(a.id, a.valid_from, a.valid_to, a.ended, a.asserted, a.learned)


def _bounds(members: list[Assertion]) -> dict[Any, tuple[datetime, datetime | None]]:
    """Each statement's span from the words of its own edge (pipelines/intervals.py: an end
    alone closes the edge's open statement); an unknown start is the beginning of time."""
    found = by_edge(members, lambda a: a.edge_id, _statement)
    return {k: (start or _MIN, stop) for k, (start, stop) in found.items()}


def _group_key(a: Assertion, end: End) -> tuple[str, str]:
    """(grouping end, value end) as strings so UUIDs and their text compare equal."""
    if end == "source":
        return str(a.source_id), str(a.target_id)
    return str(a.target_id), str(a.source_id)


def _judge_group(members: list[Assertion], end: End) -> list[IntervalVerdict]:
    bounds = _bounds(members)
    value = {a.id: _group_key(a, end)[1] for a in members}
    rank = {a.id: (bounds[a.id][0], _opt(a.learned) or _MIN, str(a.id)) for a in members}
    points = sorted({t for s, e in bounds.values() for t in (s, e) if t is not None})

    def holder(t: datetime) -> Any:
        live = [a.id for a in members if bounds[a.id][0] <= t and (bounds[a.id][1] is None or t < bounds[a.id][1])]
        return max(live, key=rank.__getitem__) if live else None

    holders = {t: holder(t) for t in points}
    out = []
    for a in members:
        start, stop = bounds[a.id]
        ends_at, successor = None, None
        for t in points:
            if t < start:
                continue
            h = holders[t]
            if (stop is None or t < stop) and h is not None and value[h] == value[a.id]:
                continue
            ends_at, successor = t, (h if h is not None and value[h] != value[a.id] else None)
            break
        out.append(IntervalVerdict(a.id, None if start == _MIN else start, ends_at, successor))
    return out


def judge(
    assertions: Iterable[Assertion],
    functional: Iterable[str] | Mapping[str, str] | None,
    touched: set[Any] | None = None,
    now: datetime | None = None,
) -> Judgement:
    """Verdicts for every interval and edge of the functional groups whose grouping end was
    touched (None = all groups). Relationships not declared functional are never judged."""
    ends = normalise_functional(functional)
    now = utc(now or datetime.now(UTC))
    touched_keys = None if touched is None else {str(t) for t in touched}
    groups: dict[tuple[str, str], list[Assertion]] = {}
    for a in assertions:
        rel = normalise_relationship(a.relationship)
        end = ends.get(rel)
        if end is None:
            continue  # undeclared relationships never collapse
        key = _group_key(a, end)[0]
        if touched_keys is not None and key not in touched_keys:
            continue
        groups.setdefault((key, rel), []).append(a)

    intervals: list[IntervalVerdict] = []
    edges: list[EdgeVerdict] = []
    for (_, rel), members in groups.items():
        verdicts = _judge_group(members, ends[rel])
        intervals += verdicts
        edge_of = {a.id: a.edge_id for a in members}
        by_edge: dict[Any, list[IntervalVerdict]] = {}
        for v in verdicts:
            by_edge.setdefault(edge_of[v.id], []).append(v)
        for edge, own in by_edge.items():
            edges.append(_edge_verdict(edge, own, edge_of, rel, now))
    return Judgement(intervals, edges)


def _edge_verdict(edge: Any, own: list[IntervalVerdict], edge_of: dict, rel: str, now: datetime) -> EdgeVerdict:
    valid_from = min((v.starts_at or _MIN for v in own), default=_MIN)
    valid_from = None if valid_from == _MIN else valid_from
    if any(v.ends_at is None for v in own):
        return EdgeVerdict(edge, False, None, None, valid_from, None)
    last = max(own, key=lambda v: (v.ends_at, str(v.id)))
    if last.ends_at > now:  # an end still to come: current until then
        return EdgeVerdict(edge, False, None, None, valid_from, last.ends_at)
    successor = edge_of.get(last.superseded_by) if last.superseded_by is not None else None
    if successor is None or str(successor) == str(edge):
        return EdgeVerdict(edge, False, None, None, valid_from, last.ends_at)
    return EdgeVerdict(edge, True, successor, reason_for(rel), valid_from, last.ends_at)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, datetime) and isinstance(b, datetime):
        return utc(a) == utc(b)
    return (str(a) if a is not None else None) == (str(b) if b is not None else None)


def interval_changes(judgement: Judgement, previous: Iterable[Assertion]) -> list[IntervalVerdict]:
    """The interval verdicts that differ from what is stored: what the writer must persist."""
    before = {a.id: a for a in previous}
    out = []
    for v in judgement.intervals:
        old = before.get(v.id)
        if old is None or not (old.functional and _same(old.starts_at, v.starts_at)
                               and _same(old.ends_at, v.ends_at) and _same(old.superseded_by, v.superseded_by)):
            out.append(v)
    return out


def edge_changes(judgement: Judgement, previous: Mapping[Any, Mapping[str, Any]]) -> list[EdgeVerdict]:
    """The edge verdicts that differ from the stored columns (superseded, superseded_by,
    supersession_reason, valid_from, valid_to)."""
    out = []
    for v in judgement.edges:
        old = previous.get(v.id) or {}
        if not all(_same(old.get(k), getattr(v, k)) for k in
                   ("superseded_by", "supersession_reason", "valid_from", "valid_to")) \
                or bool(old.get("superseded")) != v.superseded:
            out.append(v)
    return out


def assertions_of(edge_rows: Iterable[Mapping[str, Any]], interval_rows: Iterable[Mapping[str, Any]]) -> list[Assertion]:
    """Assertions from stored edges and their interval rows. An edge with no interval row (a
    fact written before intervals existed, or by hand) is one interval starting when Engram
    learned it (its updated_at), as supersession dated undated facts before."""
    by_edge: dict[Any, list[Mapping[str, Any]]] = {}
    for i in interval_rows:
        by_edge.setdefault(i["edge_id"], []).append(i)
    out = []
    for e in edge_rows:
        common = dict(edge_id=e["id"], source_id=e["source_id"], target_id=e["target_id"],
                      relationship=e["relationship"])
        rows = by_edge.get(e["id"])
        if not rows:
            out.append(Assertion(interval_id(e["id"], None, 0), **common, learned=e.get("updated_at")))
            continue
        for i in rows:
            out.append(Assertion(
                i["id"], **common, valid_from=i.get("valid_from"), valid_to=i.get("valid_to"),
                ended=bool(i.get("ended")), asserted=i.get("asserted_at"), learned=i.get("created_at"),
                functional=bool(i.get("functional")), starts_at=i.get("starts_at"), ends_at=i.get("ends_at"),
                superseded_by=i.get("superseded_by")))
    return out
