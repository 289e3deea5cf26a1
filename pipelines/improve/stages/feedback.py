"""feedback_weights: move the feedback weight of an entry's source chunks and edges.

Each helpful verdict moves a weight a step alpha toward 1, each harmful one toward 0:
w ← w + alpha·(target − w). Only verdicts not yet applied count, so a rerun changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping


def move(weight: float, helpful: int, harmful: int, alpha: float) -> float:
    """Apply `helpful` steps toward 1, then `harmful` steps toward 0 (closed form)."""
    keep = 1.0 - alpha
    weight = 1.0 - (1.0 - weight) * keep**max(helpful, 0)
    weight = weight * keep**max(harmful, 0)
    return min(1.0, max(0.0, weight))


def pending_verdicts(entries: Iterable[Mapping]) -> dict[str, tuple[int, int]]:
    """Per entry id: (helpful, harmful) verdicts not yet applied."""
    out: dict[str, tuple[int, int]] = {}
    for e in entries:
        helpful = e["helpful_count"] - e["feedback_applied_helpful"]
        harmful = e["harmful_count"] - e["feedback_applied_harmful"]
        if helpful > 0 or harmful > 0:
            out[str(e["id"])] = (max(helpful, 0), max(harmful, 0))
    return out


def new_weights(
    entries: Iterable[Mapping], current: Mapping[uuid.UUID, float], key: str, alpha: float
) -> dict[uuid.UUID, float]:
    """New weights of the source ids under `key` (source_chunk_ids | source_edge_ids).

    A source cited by several entries takes all their verdicts, in arrival order.
    """
    weights: dict[uuid.UUID, float] = {}
    for e in sorted(entries, key=lambda e: e["seq"]):
        helpful = max(e["helpful_count"] - e["feedback_applied_helpful"], 0)
        harmful = max(e["harmful_count"] - e["feedback_applied_harmful"], 0)
        if not helpful and not harmful:
            continue
        for source in e[key] or []:
            if source not in current:
                continue  # forgotten since, or never in this dataset
            base = weights.get(source, current[source])
            weights[source] = move(base, helpful, harmful, alpha)
    return weights


# ------------------------------------------------------------------ the stage

ALPHA = 0.1  # the step a verdict moves a weight
SOURCES = (("chunks", "source_chunk_ids"), ("edges", "source_edge_ids"))


def gate(uow, ctx):
    if not uow.sessions.unapplied_feedback(ctx.dataset_id, ctx.session_ids):
        return ("skipped", "no_new_feedback")
    return None


def load(uow, ctx) -> dict:
    """The entries with unapplied verdicts and the current weights of their sources."""
    entries = uow.sessions.unapplied_feedback(ctx.dataset_id, ctx.session_ids)
    current = {table: uow.improve.weights(table, ctx.dataset_id, {i for e in entries for i in (e[key] or [])})
               for table, key in SOURCES}
    return {"entries": entries, "current": current}


def compute(inputs: dict, ctx) -> dict:
    return {table: new_weights(inputs["entries"], inputs["current"][table], key, ALPHA) for table, key in SOURCES}


def persist(uow, ctx, inputs: dict, moved: dict) -> dict:
    """The new weights and the verdicts they apply (counts as loaded: later verdicts stay pending)."""
    counts = {"entries": len(inputs["entries"])}
    for table, _ in SOURCES:
        uow.improve.set_weights(table, moved[table])
        counts[table] = len(moved[table])
    uow.sessions.mark_feedback_applied(inputs["entries"])
    return counts
