"""The improve flow (SPEC 6.1), declared once: its stages in the reference's order, each with
its functions in stages/ and its ImprovePolicy (opt-in, needs sessions, available), which only
improve has. The claim, fence and budget are the runner's (tasks/engine.py);
pipelines/improve/registry.py decides which stages run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engram.pipelines.flow import FATAL, OPTIONAL, Flow, Stage, StageSkipped
from engram.pipelines.improve.distill import MIN_CONFIDENCE
from engram.pipelines.improve.stages import (agent_context, agent_traces, distillation, feedback, global_context,
                                             preferences, qa, triplets, truth_stage)


@dataclass(frozen=True)
class ImprovePolicy:
    """Whether an improve stage runs, beyond what every flow's stage declares (pipelines/flow.py)."""

    opt_in: bool = False  # off unless enabled in settings
    needs_sessions: bool = True  # nothing to do without session ids
    available: bool = True  # False: declared, recorded "not_available" until its body exists


POLICY: dict[str, ImprovePolicy] = {}  # stage name -> its policy, filled by the declarations below


def _not_built(inputs, ctx):
    raise StageSkipped("stage body not available in this version")  # not reached: decided not_available first


def _improve(name: str, module: Any = None, *, failure: str = OPTIONAL, **policy) -> Stage:
    names = ("load", "compute", "publish", "persist", "gate")
    functions = {f: getattr(module, f, None) for f in names} if module else {"compute": _not_built}
    POLICY[name] = ImprovePolicy(available=module is not None, **policy)
    return Stage(name, "maintenance", "improve", failure=failure, uses_budget=True, **functions)


FEEDBACK_WEIGHTS = _improve("feedback_weights", feedback)
PERSIST_SESSION_QA = _improve("persist_session_qa", qa, failure=FATAL)
PERSIST_AGENT_TRACES = _improve("persist_agent_traces", agent_traces)
EXTRACT_AGENT_CONTEXT = _improve("extract_agent_context", agent_context)
DISTILL_SESSIONS = _improve("distill_sessions", distillation)
UPDATE_USER_PREFERENCES = _improve("update_user_preferences", preferences, opt_in=True)
BUILD_TRUTH_SUBSPACE = _improve("build_truth_subspace", truth_stage, needs_sessions=False, opt_in=True)
TRIPLET_ENRICHMENT = _improve("triplet_enrichment", triplets, needs_sessions=False, opt_in=True)
GLOBAL_CONTEXT_INDEX = _improve("global_context_index", global_context, needs_sessions=False, opt_in=True)

IMPROVE = Flow("improve", (
    FEEDBACK_WEIGHTS, PERSIST_SESSION_QA, PERSIST_AGENT_TRACES, EXTRACT_AGENT_CONTEXT, DISTILL_SESSIONS,
    UPDATE_USER_PREFERENCES, BUILD_TRUTH_SUBSPACE, TRIPLET_ENRICHMENT, GLOBAL_CONTEXT_INDEX,
), runs="improve")


def switched_on(stage: Stage, disabled: Iterable[str], opt_in: Iterable[str]) -> bool:
    """A fatal stage always runs; another unless disabled, an opt-in one only when opted in."""
    if stage.fatal:
        return True
    if stage.name in set(disabled):
        return False
    return not POLICY[stage.name].opt_in or stage.name in set(opt_in)


def enabled(stage: Stage, settings) -> bool:
    return switched_on(stage, settings.improve_disabled, settings.improve_opt_in)


def pending_work(uow, dataset_id: uuid.UUID, session_ids: list[str], settings, *, generates: bool,
                 retries: bool = True) -> dict:
    """The probe: per session the seq window above the watermark, unapplied feedback and the
    agent traces above their watermarks (`traces`: upto, persist, context); changed edges when
    triplet enrichment is on. Nothing → the run is a no_op.

    generates: the configured LLM writes text (distillation needs one)."""
    out: dict[str, Any] = {"sessions": {}, "triplets": 0}
    rows = {r["session_id"]: r for r in uow.improve.sessions(dataset_id, session_ids)} if session_ids else {}
    for sid in session_ids:
        r = rows.get(sid)
        out["sessions"][sid] = {
            "from": r["watermark_seq"] if r else 0, "upto": r["max_seq"] if r else 0,
            "new_entries": r["pending_entries"] if r else 0, "feedback": r["pending_feedback"] if r else 0}
    trace_stages = [key for key, stage in (("persist", PERSIST_AGENT_TRACES), ("context", EXTRACT_AGENT_CONTEXT))
                    if enabled(stage, settings)]
    if trace_stages and session_ids:
        for sid, t in uow.agentic.pending_traces(dataset_id, session_ids).items():
            out["sessions"][sid]["traces"] = {**t, "pending": sum(t[k] for k in trace_stages)}
    if enabled(TRIPLET_ENRICHMENT, settings):
        out["triplets"] = len(uow.improve.changed_edges(dataset_id, limit=1000))
    if enabled(DISTILL_SESSIONS, settings) and session_ids and generates:
        # Usable entries a failed distillation left above its own watermark are work too.
        for sid, n in uow.learning.gated_pending(dataset_id, session_ids, MIN_CONFIDENCE).items():
            out["sessions"][sid]["distill"] = n
    out["truth"] = enabled(BUILD_TRUTH_SUBSPACE, settings) and bool(uow.learning.truth_due([dataset_id]))
    # retries=False (a holder re-checking for new work): a distillation that just failed is not
    # retried at once in the same claim; the next improve of the session retries it.
    out["pending"] = out["triplets"] > 0 or out["truth"] or any(
        v["new_entries"] or v["feedback"] or (retries and v.get("distill")) or (v.get("traces") or {}).get("pending")
        for v in out["sessions"].values())
    return out
