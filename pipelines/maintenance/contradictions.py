"""Contradiction check over the touched neighbourhood (SPEC §7.1). Pure: the task loads the
edges and names, makes the one LLM call, and writes the returned `contradicts` edges.

Facts are rendered "[F{i}] {source} {relationship} {target}". The `first_fact` /
`second_fact` properties hold Engram's rendering WITHOUT the "[F{i}] " prefix (the F-ids are
per-call and mean nothing once stored), never the model's wording. Nothing is deleted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engram.pipelines.dates import utc
from engram.pipelines.facts import CONTRADICTS, fact_text, is_fact
from engram.pipelines.ids import normalise_relationship
from engram.pipelines.maintenance.supersession import EdgeFact, as_edge_fact
from engram.prompts.contradiction import ContradictionList

DEFAULT_MAX_FACTS = 500
DEFAULT_MIN_CONFIDENCE = 0.5


@dataclass(frozen=True)
class Fact:
    fid: str  # "F1", "F2", ... in the order sent
    edge_id: Any
    source_id: Any
    target_id: Any
    relationship: str
    text: str  # "{source name} {relationship words} {target name}", no "[F#]" prefix

    @property
    def line(self) -> str:
        return f"[{self.fid}] {self.text}"


@dataclass(frozen=True)
class ContradictionEdge:
    source_id: Any
    target_id: Any
    properties: dict[str, Any]
    first_edge_id: Any
    second_edge_id: Any
    relationship: str = field(default=CONTRADICTS)


def _name(names: Mapping[Any, str], node_id: Any) -> str | None:
    # Names may be keyed by UUID or by its text.
    name = names.get(node_id)
    if name is None:
        name = names.get(str(node_id))
    return name.strip() if name and name.strip() else None


def select_facts(
    edges: Iterable[EdgeFact | Mapping[str, Any]],
    names: Mapping[Any, str],
    touched: set[Any],
    max_facts: int = DEFAULT_MAX_FACTS,
    now: datetime | None = None,
) -> list[Fact]:
    """Current facts (pipelines/facts) with at least one touched, named endpoint, at most max_facts.

    A superseded or ended edge (valid_to passed, by the one date rule) is history, not a rival
    of its successor, so it is never sent. An unnamed
    far endpoint is rendered by its id. Duplicate edge ids are sent once.
    """
    touched_keys = {str(t) for t in touched}
    facts: list[Fact] = []
    seen: set[str] = set()
    for raw in edges:
        if len(facts) >= max_facts:
            break
        edge = as_edge_fact(raw)
        if (raw.get("superseded") if isinstance(raw, Mapping) else False) or edge.properties.get("superseded"):
            continue
        if isinstance(raw, Mapping) and _ended(raw.get("valid_to"), now):
            continue  # an explicit end is history too ("mayor from 2015 to 2022")
        rel = normalise_relationship(edge.relationship)
        if not is_fact(rel) or str(edge.id) in seen:
            continue
        source_name, target_name = _name(names, edge.source_id), _name(names, edge.target_id)
        anchored = (str(edge.source_id) in touched_keys and source_name) or (
            str(edge.target_id) in touched_keys and target_name
        )
        if not anchored:
            continue
        seen.add(str(edge.id))
        text = fact_text(source_name or edge.source_id, rel, target_name or edge.target_id)
        facts.append(Fact(f"F{len(facts) + 1}", edge.id, edge.source_id, edge.target_id, rel, text))
    return facts


def _ended(valid_to: Any, now: datetime | None) -> bool:
    if not isinstance(valid_to, datetime):
        return False
    return utc(valid_to) <= utc(now or datetime.now(UTC))


def needs_check(facts: list[Fact]) -> bool:
    """Fewer than two facts cannot contradict each other: skip the LLM call."""
    return len(facts) >= 2


def facts_text(facts: Iterable[Fact]) -> str:
    return "\n".join(f.line for f in facts)


_FID = re.compile(r"^\[?\s*(F\d+)\s*\]?$", re.IGNORECASE)


def _fid(raw: str) -> str | None:
    # Accept "F3", "[F3]", "f3"; anything else is not an id we sent.
    m = _FID.match(raw.strip())
    return m.group(1).upper() if m else None


def judge(
    facts: list[Fact],
    result: ContradictionList,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
) -> list[ContradictionEdge]:
    """Turn the model's answer into `contradicts` edges Engram is willing to write.

    Kept: confidence >= min_confidence, both ids among those sent, two different edges that
    do not join the same unordered node pair. Endpoints are the two sources when they differ,
    else the two targets. One edge per unordered fact pair (the most confident claim).
    """
    by_fid = {f.fid: f for f in facts}
    kept: dict[frozenset[str], ContradictionEdge] = {}
    for claim in result.contradictions:
        if claim.confidence < min_confidence:
            continue
        first_id, second_id = _fid(claim.first_fact_id), _fid(claim.second_fact_id)
        first, second = by_fid.get(first_id or ""), by_fid.get(second_id or "")
        if first is None or second is None or str(first.edge_id) == str(second.edge_id):
            continue
        first_pair = {str(first.source_id), str(first.target_id)}
        if first_pair == {str(second.source_id), str(second.target_id)}:
            continue  # a contradicts edge here would be a self-loop or a duplicate of the fact
        if str(first.source_id) != str(second.source_id):
            source, target = first.source_id, second.source_id
        else:
            source, target = first.target_id, second.target_id
        key = frozenset({str(first.edge_id), str(second.edge_id)})
        previous = kept.get(key)
        if previous is not None and previous.properties["confidence"] >= claim.confidence:
            continue
        kept[key] = ContradictionEdge(
            source_id=source,
            target_id=target,
            properties={
                "first_fact": first.text,
                "second_fact": second.text,
                "reason": claim.reason,
                "confidence": claim.confidence,
            },
            first_edge_id=first.edge_id,
            second_edge_id=second.edge_id,
        )
    return list(kept.values())
