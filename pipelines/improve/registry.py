"""Which improve stages run (SPEC 6.1). Pure: no Celery, no store. The stages and their
ImprovePolicy are declared in pipelines/improve/flow.py.

Every stage of a run is decided here in one order: an earlier fatal failure aborts the rest,
an exhausted budget skips the rest, then the gates disabled_by_config → no_session_ids →
not_available (registered, body not built yet); the stage's own gate comes from its body.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engram.pipelines.flow import Stage
from engram.pipelines.improve.flow import IMPROVE, POLICY, switched_on

STAGES: tuple[Stage, ...] = IMPROVE.stages  # declared in pipelines/improve/flow.py
BY_NAME = {s.name: s for s in STAGES}

# Terminal stage statuses. "completed" did work; the others record why not.
DONE = {"completed", "skipped", "failed", "not_available", "already_completed", "fenced_out"}


class UnknownStage(ValueError):
    pass


def stage_names() -> list[str]:
    return [s.name for s in STAGES]


def check_config(disabled: Iterable[str], opt_in: Iterable[str]) -> None:
    """Reject unknown stage names and attempts to disable a fatal stage."""
    for name in [*disabled, *opt_in]:
        if name not in BY_NAME:
            raise UnknownStage(f"unknown improve stage {name!r}; known: {', '.join(stage_names())}")
    for name in disabled:
        if BY_NAME[name].fatal:
            raise UnknownStage(f"improve stage {name!r} is fatal and cannot be disabled")


@dataclass(frozen=True)
class Budget:
    """LLM calls / tokens one run may spend; 0 = unlimited."""

    max_llm_calls: int = 0
    max_tokens: int = 0

    def exhausted(self, llm_calls: int, tokens: int) -> bool:
        return (self.max_llm_calls > 0 and llm_calls >= self.max_llm_calls) or (
            self.max_tokens > 0 and tokens >= self.max_tokens
        )


@dataclass(frozen=True)
class Decision:
    status: str
    reason: str


def decide(
    spec: Stage,
    *,
    aborted_by: str | None,
    budget: Budget,
    llm_calls: int,
    tokens: int,
    disabled: Iterable[str],
    opt_in: Iterable[str],
    session_ids: Iterable[str],
) -> Decision | None:
    """Why this stage does not run (a Decision), or None: ask its own gate, then run it."""
    if aborted_by is not None:
        return Decision("skipped", f"aborted: fatal stage {aborted_by} failed")
    if spec.uses_budget and budget.exhausted(llm_calls, tokens):
        return Decision("skipped", "budget_exhausted")
    policy = POLICY[spec.name]
    if not switched_on(spec, disabled, opt_in):
        return Decision("skipped", "disabled_by_config")
    if policy.needs_sessions and not list(session_ids):
        return Decision("skipped", "no_session_ids")
    if not policy.available:
        return Decision("not_available", "stage body not available in this version")
    return None


def status_from_stages(stages: list[dict]) -> str:
    """A run's terminal status from its stage rows (status, fatal, reason)."""
    if any(s["status"] == "fenced_out" for s in stages):
        return "lost"
    if any(s["status"] == "failed" and s["fatal"] for s in stages):
        return "aborted"
    if any(s["status"] == "failed" for s in stages):
        return "completed_with_errors"
    if any(s.get("reason") == "budget_exhausted" for s in stages):
        return "budget_exhausted"
    return "completed"
