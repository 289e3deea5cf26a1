"""Temporal supersession of functional relationships (SPEC §7.2 + Beyond).

A functional relationship is single-valued at one end: "source" (one current target per
source, e.g. company -ceo_of-> person) or "target" (one current source per target, e.g.
person -ceo_of-> company). When a group holds several distinct values at the other end, the
most recent assertion wins and the others are tagged superseded. Nothing is deleted.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from engram.pipelines.ids import normalise_relationship

End = Literal["source", "target"]
_ENDS: frozenset[str] = frozenset({"source", "target"})


@dataclass(frozen=True)
class EdgeFact:
    id: Any
    source_id: Any
    target_id: Any
    relationship: str
    updated_at: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


def _stamp(value: Any) -> str | None:
    # Timestamps compare as strings; datetimes become ISO so they sort with ISO strings.
    if value is None:
        return None
    return value.isoformat() if isinstance(value, datetime) else str(value)


def as_edge_fact(edge: EdgeFact | Mapping[str, Any]) -> EdgeFact:
    """Accept an EdgeFact or a plain dict (relationship may be spelled relationship_name)."""
    if isinstance(edge, EdgeFact):
        return edge
    return EdgeFact(
        id=edge["id"],
        source_id=edge["source_id"],
        target_id=edge["target_id"],
        relationship=edge.get("relationship") or edge.get("relationship_name") or "",
        updated_at=_stamp(edge.get("updated_at")),
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


def _ends(edge: EdgeFact, end: End) -> tuple[str, str]:
    """(grouping end, other end) as strings so UUIDs and their text compare equal."""
    if end == "source":
        return str(edge.source_id), str(edge.target_id)
    return str(edge.target_id), str(edge.source_id)


def supersede(
    edges: Iterable[EdgeFact | Mapping[str, Any]],
    functional: Iterable[str] | Mapping[str, str] | None,
    touched: set[Any] | None = None,
    now: str | None = None,
) -> list[EdgeFact]:
    """Every edge as a NEW EdgeFact, input order kept; losers carry the supersession tags.

    touched limits the pass to groups whose grouping end was touched (None = all groups).
    now is valid_to when the winner has no updated_at (defaults to the clock).
    """
    ends = normalise_functional(functional)
    facts = [as_edge_fact(e) for e in edges]
    out = [replace(f, properties=copy.deepcopy(dict(f.properties or {}))) for f in facts]
    if not ends or not facts:
        return out
    touched_keys = None if touched is None else {str(t) for t in touched}

    groups: dict[tuple[str, str], list[int]] = {}
    for i, fact in enumerate(facts):
        rel = normalise_relationship(fact.relationship)
        end = ends.get(rel)
        if end is None:
            continue  # undeclared relationships never collapse
        key, _ = _ends(fact, end)
        if touched_keys is not None and key not in touched_keys:
            continue
        groups.setdefault((key, rel), []).append(i)

    for (_, rel), members in groups.items():
        end = ends[rel]
        if len({_ends(facts[i], end)[1] for i in members}) < 2:
            continue  # re-asserting the same value is not a conflict
        # Missing updated_at sorts oldest; equal stamps → later position wins.
        winner = max(members, key=lambda i: (facts[i].updated_at is not None, facts[i].updated_at or "", i))
        current = _ends(facts[winner], end)[1]
        valid_to = facts[winner].updated_at or now or datetime.now(UTC).isoformat()
        for i in members:
            props = out[i].properties
            if _ends(facts[i], end)[1] == current:
                if props.get("superseded"):
                    # A re-asserted value is current again: clear stale tags explicitly so a
                    # merging writer overwrites them too.
                    props.update(superseded=False, superseded_by=None, supersession_reason=None, valid_to=None)
                continue
            if props.get("superseded"):
                continue  # keep the original history (who superseded it, and when)
            props.update(
                superseded=True,
                superseded_by=facts[winner].id,
                supersession_reason=reason_for(rel),
                valid_to=valid_to,
            )
    return out


def changed_edges(
    edges: Iterable[EdgeFact | Mapping[str, Any]],
    functional: Iterable[str] | Mapping[str, str] | None,
    touched: set[Any] | None = None,
    now: str | None = None,
) -> list[EdgeFact]:
    """Only the edges whose properties supersede() changed: what the writer must persist."""
    facts = [as_edge_fact(e) for e in edges]
    result = supersede(facts, functional, touched, now)
    return [new for old, new in zip(facts, result) if dict(old.properties or {}) != new.properties]
