"""Rule router for queries without an explicit search type (SPEC §5).

Weighted regex rules vote for a search type; a rule whose every match is negated ("not",
"no", "never", "without", "lack", "n't" in the 20 characters before it) does not vote. Each
rule counts once however often it matches. Highest total wins (ties: the type whose rule is
declared first); a best total below 2.0 routes to HYBRID_COMPLETION.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engram.models.search import SearchType

THRESHOLD = 2.0
DEFAULT_TYPE = SearchType.HYBRID_COMPLETION
NEGATION_WINDOW = 20

_NEGATION = re.compile(r"\b(?:not|no|never|without|lack\w*)\b|n't", re.IGNORECASE)


@dataclass(frozen=True)
class Rule:
    label: str
    weight: float
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None  # the rule stays silent when this matches the query


def rule(label: str, weight: float, pattern: str, unless: str | None = None) -> Rule:
    return Rule(label, weight, re.compile(pattern, re.IGNORECASE), re.compile(unless, re.IGNORECASE) if unless else None)


# A question (wh-word or auxiliary first, or a closing "?"): quoting a title inside one is not a
# phrase search.
QUESTION = (r"^\s*(?:who|whom|whose|what|which|when|where|why|how|is|are|was|were|did|does|do|has|have|can"
            r"|in|on|at)\b|\?\s*$")


@dataclass(frozen=True)
class RouteDecision:
    search_type: SearchType
    score: float
    # Labels of the rules that voted for the chosen type (empty when defaulted).
    matched: list[str] = field(default_factory=list)


def _negated(query: str, start: int) -> bool:
    return bool(_NEGATION.search(query[max(0, start - NEGATION_WINDOW) : start]))


def _fires(rule: Rule, query: str) -> bool:
    """A rule fires when at least one of its matches is not negated (and its `unless` does not match).
    A match of the pattern's group `skip`, if it has one, does not count (it only consumes text)."""
    if rule.unless is not None and rule.unless.search(query):
        return False
    return any(not (m.re.groupindex.get("skip") and m.group("skip")) and not _negated(query, m.start())
               for m in rule.pattern.finditer(query))


def route(query: str, rules: Sequence[tuple[SearchType, Rule]] | None = None) -> RouteDecision:
    """Rules default to the search-type registry's (pipelines/recall/registry.py)."""
    if rules is None:
        from engram.pipelines.recall.registry import router_rules  # the registry imports this module

        rules = router_rules()
    totals: dict[SearchType, float] = {}
    labels: dict[SearchType, list[str]] = {}
    for search_type, rule in rules:
        if _fires(rule, query):
            totals[search_type] = totals.get(search_type, 0.0) + rule.weight
            labels.setdefault(search_type, []).append(rule.label)
    if not totals:
        return RouteDecision(DEFAULT_TYPE, 0.0, [])
    # max() keeps the first maximum, and dicts keep rule-declaration order.
    best = max(totals, key=lambda t: totals[t])
    if totals[best] < THRESHOLD:
        return RouteDecision(DEFAULT_TYPE, totals[best], [])
    return RouteDecision(best, totals[best], labels[best])

