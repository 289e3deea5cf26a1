"""Enrich (SPEC 9): the object's memory tier, its connection count and its staleness."""

from __future__ import annotations

import uuid

STALE_PER_SUPERSEDED_DEPENDENCY = 0.5


def tier(current: str | None, summary: str | None, confidence: float | None) -> str:
    """reflex is never demoted here (promotion/demotion is the learning loop's); else recall
    when the object has a summary and confidence > 0, else archive."""
    if current == "reflex":
        return "reflex"
    return "recall" if (summary or "").strip() and (confidence or 0.0) > 0 else "archive"


def staleness(object_id: uuid.UUID, edges: list[dict], superseded: set[uuid.UUID]) -> float:
    """0 fresh .. 1 stale: each thing the object depends on that has been superseded adds 0.5."""
    score = sum(STALE_PER_SUPERSEDED_DEPENDENCY for e in edges
                if e["source_id"] == object_id and e["relationship"] == "depends_on" and e["target_id"] in superseded)
    return min(1.0, score)


def enrich(obj: dict, edges: list[dict], superseded: set[uuid.UUID]) -> dict:
    """obj: {id, tier, summary, confidence}; edges: every edge touching it; superseded: ids of
    objects some other object supersedes."""
    return {
        "tier": tier(obj.get("tier"), obj.get("summary"), obj.get("confidence")),
        "connection_count": len(edges),
        "staleness": staleness(obj["id"], edges, superseded),
    }
