"""Reason (SPEC 9): fixed rules over the capture graph, applied to a fixpoint.

contradicts is symmetric; causedBy and ledTo are inverses; supersedes is transitive (a != c).
Every inferred edge names its rule and the edges it was derived from; edges that already
exist (asserted or inferred) are never derived again, so a second run adds nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from engram.pipelines.facts import CONTRADICTS

MAX_ITERATIONS = 10

Key = tuple[uuid.UUID, uuid.UUID, str]  # (source, target, relationship)


@dataclass(frozen=True)
class Inferred:
    source: uuid.UUID
    target: uuid.UUID
    relationship: str
    rule: str
    premises: tuple[Key, ...]


@dataclass
class Reasoning:
    inferred: list[Inferred] = field(default_factory=list)
    rule_counts: dict[str, int] = field(default_factory=dict)
    iterations: int = 0
    fixpoint: bool = True


def _symmetric(rel: str, rule: str):
    def apply(facts: set[Key], by_rel: dict[str, set[Key]]) -> Iterable[tuple[Key, str, tuple[Key, ...]]]:
        for a, b, _ in by_rel.get(rel, ()):
            yield (b, a, rel), rule, ((a, b, rel),)
    return apply


def _inverse(rel: str, inverse: str, rule: str):
    def apply(facts, by_rel):
        for a, b, _ in by_rel.get(rel, ()):
            yield (b, a, inverse), rule, ((a, b, rel),)
    return apply


def _transitive(rel: str, rule: str):
    def apply(facts, by_rel):
        outgoing: dict[uuid.UUID, list[uuid.UUID]] = {}
        for a, b, _ in by_rel.get(rel, ()):
            outgoing.setdefault(a, []).append(b)
        for a, bs in outgoing.items():
            for b in bs:
                for c in outgoing.get(b, ()):
                    if a != c:
                        yield (a, c, rel), rule, ((a, b, rel), (b, c, rel))
    return apply


RULES = (
    ("symmetric_contradicts", _symmetric(CONTRADICTS, "symmetric_contradicts")),
    ("inverse_caused_by_led_to", _inverse("caused_by", "led_to", "inverse_caused_by_led_to")),
    ("inverse_led_to_caused_by", _inverse("led_to", "caused_by", "inverse_led_to_caused_by")),
    ("transitive_supersedes", _transitive("supersedes", "transitive_supersedes")),
)


def reason(edges: Iterable[Key], max_iterations: int = MAX_ITERATIONS) -> Reasoning:
    """Derive missing edges until an iteration adds none or max_iterations have run.

    Each rule sees the facts as they stood when it started (so one transitive step per
    iteration: a chain of n edges closes in about log2(n) iterations).
    """
    facts: set[Key] = set(edges)
    result = Reasoning(rule_counts={name: 0 for name, _ in RULES})
    for iteration in range(1, max_iterations + 1):
        added = 0
        for name, rule in RULES:
            by_rel: dict[str, set[Key]] = {}
            for fact in facts:
                by_rel.setdefault(fact[2], set()).add(fact)
            fresh: dict[Key, Inferred] = {}
            for key, rule_name, premises in rule(facts, by_rel):
                if key[0] != key[1] and key not in facts and key not in fresh:
                    fresh[key] = Inferred(key[0], key[1], key[2], rule_name, premises)
            facts.update(fresh)
            result.inferred.extend(sorted(fresh.values(), key=lambda i: (str(i.source), str(i.target), i.relationship)))
            result.rule_counts[name] += len(fresh)
            added += len(fresh)
        result.iterations = iteration
        if added == 0:
            return result
    result.fixpoint = False
    return result
