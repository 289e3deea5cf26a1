"""Improve runs (SPEC 6.1, 6.2): claim → pending-work probe → a chain of stage tasks → finish.

A claim (adapters/claims.py) covers the run's sessions and its dataset. Each pass of a claim
is one improve run: a Celery chain with one task per stage of the improve flow
(pipelines/improve/flow.py, run by tasks/engine.py) and a finish task that either starts
another pass (new work arrived, up to improve_max_passes) or releases. Every write a stage
makes first checks the claim's fencing number in the same transaction.
"""

from __future__ import annotations

import logging
import uuid
from typing import Literal

from pydantic import BaseModel, Field

from engram.adapters.claims import Busy, Claim, Claims, describe, keys_for
from engram.adapters.redis_client import get_redis
from engram.adapters.store import Store
from engram.adapters.store.access import require_run
from engram.adapters.store.improve import FencedOut, fence_scopes
from engram.models.payloads import ImproveRequest, ImproveResult, ImproveRunRequest
from engram.pipelines.improve import registry
from engram.pipelines.improve.flow import IMPROVE, pending_work as probe
from engram.settings import get_settings
from engram.tasks.base import InvalidPayload, engram_task
from engram.tasks.run_books import claim_of as _claim_of
from engram.tasks.engine import run_chain

log = logging.getLogger("engram.improve")


class StartImprove(BaseModel):
    """engram.improve.start: internal (automatic, beat, rerun) improve of known ids."""

    dataset_id: uuid.UUID
    session_ids: list[str] = Field(default_factory=list)
    trigger: Literal["auto", "beat", "rerun", "explicit"] = "auto"
    max_llm_calls: int | None = None
    max_tokens: int | None = None


class RunRequest(BaseModel):
    run_id: uuid.UUID


@engram_task("engram.improve", payload=ImproveRequest)
def improve(self, req: ImproveRequest) -> dict:
    """Explicit improve: authorised, never subject to admission or debounce."""
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
    return start_improve(StartImprove(dataset_id=dataset, session_ids=req.session_ids, trigger="explicit",
                                      max_llm_calls=req.max_llm_calls, max_tokens=req.max_tokens),
                         node=self.request.hostname)


@engram_task("engram.improve.start", payload=StartImprove)
def start(self, req: StartImprove) -> dict:
    return start_improve(req, node=self.request.hostname)


def start_improve(req: StartImprove, node: str | None = None) -> dict:
    """Claim every key or none; busy → rerun request; else probe and start the first pass.

    node: the Celery node claiming (`-n` of its worker), named in the holder: the OS host name
    and pid alone do not tell two workers of one machine, or containers, apart."""
    s = get_settings()
    sessions = sorted(set(req.session_ids))
    scopes = fence_scopes(req.dataset_id, sessions)
    claims = Claims(get_redis())
    with Store().unit_of_work() as uow:
        floor = uow.improve.fence_floor(scopes)
    got = claims.claim(keys_for(req.dataset_id, sessions), s.lock_lease_seconds, floor,
                       info={"trigger": req.trigger, **({"node": node} if node else {})})
    result = ImproveResult(status="busy", dataset_id=req.dataset_id, session_ids=sessions)
    if isinstance(got, Busy):
        with Store().unit_of_work() as uow:
            uow.improve.request_rerun(req.dataset_id, sessions)
        result.rerun_requested, result.reason = True, f"held by {describe(got.holder)}"
        return result.model_dump(mode="json")
    claim_id = uuid.uuid4()
    budget = {"max_llm_calls": s.improve_max_llm_calls if req.max_llm_calls is None else req.max_llm_calls,
              "max_tokens": s.improve_max_tokens if req.max_tokens is None else req.max_tokens}
    try:
        with Store().unit_of_work() as uow:
            uow.improve.check_fence(scopes, got.fence)
            uow.improve.ensure_sessions(req.dataset_id, sessions)
            uow.improve.create_claim(claim_id, req.dataset_id, sessions, got.fence, got.keys, got.value, req.trigger)
            uow.improve.mark_improving(req.dataset_id, sessions)
    except FencedOut:  # our lease lapsed before we could even record it
        with Store().unit_of_work() as uow:
            uow.improve.request_rerun(req.dataset_id, sessions)
        result.rerun_requested, result.reason = True, "claim lost before it started"
        return result.model_dump(mode="json")
    except Exception:
        claims.release(got)
        raise
    try:
        run_id, status = begin_pass(claim_id, got, req.trigger, budget)
    except Exception:
        release(claim_id, got, kick=False)
        raise
    result.status = "started" if status == "running" else "no_op"
    result.run_id, result.claim_id, result.fence = run_id, claim_id, got.fence
    if status != "running":
        release(claim_id, got)
    return result.model_dump(mode="json")


def begin_pass(claim_id: uuid.UUID, claim: Claim, trigger: str, budget: dict) -> tuple[uuid.UUID, str]:
    """Snapshot the work (consuming rerun requests) and enqueue the pass's chain; no work → no_op."""
    run_id = uuid.uuid4()
    with Store().unit_of_work() as uow:
        row = uow.improve.claim(claim_id, lock=True)
        dataset, sessions = row["dataset_id"], list(row["session_ids"])
        uow.improve.check_fence(fence_scopes(dataset, sessions), claim.fence)
        pass_no = uow.improve.count_pass(claim_id)
        uow.improve.consume_reruns(dataset, sessions)
        snapshot = pending_work(uow, dataset, sessions)
        status = "running" if snapshot["pending"] else "no_op"
        stages = [(stage.name, stage.fatal) for stage in IMPROVE.stages] if status == "running" else []
        uow.improve.create_run(run_id, claim_id=claim_id, pass_no=pass_no, dataset_id=dataset, session_ids=sessions,
                               fence=claim.fence, trigger=trigger, status=status, snapshot=snapshot, budget=budget,
                               stages=stages)
    if status == "running":
        from engram.celery_app import app

        chain = run_chain(IMPROVE, run_id, [name for name, _ in stages])
        try:
            (chain | app.signature("engram.improve.finish", kwargs={"run_id": str(run_id)}, immutable=True)
             ).apply_async()
        except Exception as exc:  # never leave a run "running" that no chain will finish
            with Store().unit_of_work() as uow:
                uow.improve.finish_run(run_id, "failed", error=f"could not enqueue: {exc}")
            raise
    return run_id, status


def pending_work(uow, dataset_id: uuid.UUID, session_ids: list[str], retries: bool = True) -> dict:
    settings = get_settings()
    return probe(uow, dataset_id, session_ids, settings, generates=_generates(settings), retries=retries)


def _generates(settings) -> bool:
    from engram.adapters.llm.gateway import gateway_from_settings

    try:
        return gateway_from_settings(settings).generates
    except Exception:
        return False


def release(claim_id: uuid.UUID, claim: Claim, kick: bool = True) -> None:
    """Record the release, free the keys, and hand leftover rerun requests to the next claimant."""
    with Store().unit_of_work() as uow:
        uow.improve.close_claim(claim_id, "released")
        dataset = uow.improve.claim(claim_id)["dataset_id"]
    Claims(get_redis()).release(claim)
    if kick:
        kick_reruns(dataset)


def kick_reruns(dataset_id: uuid.UUID | None = None) -> int:
    """Turn rerun requests (of one dataset, or all) into improve runs: one start per dataset."""
    from engram.celery_app import app

    with Store().unit_of_work() as uow:
        requests = uow.improve.rerun_requests()
    by_dataset: dict[uuid.UUID, set[str]] = {}
    for r in requests:
        if dataset_id is None or r["dataset_id"] == dataset_id:
            by_dataset.setdefault(r["dataset_id"], set()).update([r["session_id"]] if r["session_id"] else [])
    for dataset, sessions in by_dataset.items():
        app.send_task("engram.improve.start", kwargs={
            "dataset_id": str(dataset), "session_ids": sorted(sessions), "trigger": "rerun"})
    return len(by_dataset)


@engram_task("engram.improve.finish", payload=RunRequest)
def finish(self, req: RunRequest) -> dict:
    """Close the pass; re-check for new work (up to improve_max_passes) or release the claim."""
    s = get_settings()
    with Store().unit_of_work() as uow:
        run = uow.improve.run(req.run_id, lock=True)
        if run is None:
            raise InvalidPayload(f"improve run {req.run_id} does not exist")
        if run["status"] != "running":
            return {"run_id": str(req.run_id), "status": run["status"], "redelivered": True}
        stages = uow.improve.stages(req.run_id)
        status = registry.run_status(stages)
        failed = [f"{r['stage']}: {r['error']}" for r in stages if r["status"] == "failed"]
        uow.improve.finish_run(req.run_id, status, error="; ".join(failed) or None)
        claim_row = uow.improve.claim(run["claim_id"])
        more = pending_work(uow, run["dataset_id"], list(run["session_ids"]), retries=False)["pending"] or any(
            r["rerun_requested_at"] is not None for r in uow.improve.sessions(run["dataset_id"], run["session_ids"])
        ) or (uow.improve.dataset_state(run["dataset_id"]) or {}).get("rerun_requested_at") is not None
    out = {"run_id": str(req.run_id), "status": status, "pass": run["pass"]}
    if status == "lost" or claim_row["status"] != "held":
        return out
    claims = Claims(get_redis())
    claim = _claim_of(claim_row, s.lock_lease_seconds)
    if not claims.renew(claim):
        with Store().unit_of_work() as uow:
            uow.improve.close_claim(claim_row["id"], "lost", note="lease expired between stages")
            uow.improve.request_rerun(run["dataset_id"], list(run["session_ids"]))
        return {**out, "claim": "lost"}
    if more and status in ("completed", "completed_with_errors") and claim_row["passes"] < s.improve_max_passes:
        try:
            next_run, next_status = begin_pass(claim_row["id"], claim, run["trigger"], run["budget"])
        except Exception:
            release(claim_row["id"], claim, kick=False)
            raise
        if next_status == "running":
            return {**out, "next_run_id": str(next_run)}
    release(claim_row["id"], claim)
    return {**out, "claim": "released"}


@engram_task("engram.improve.run_status", payload=ImproveRunRequest)
def run_status(self, req: ImproveRunRequest) -> dict:
    from engram.tasks.sessions import _run_summary

    with Store().unit_of_work() as uow:
        run = uow.improve.run(req.run_id)
        require_run(uow, run, req.run_id, req.user, "read", what="improve run")
        claim = uow.improve.claim(run["claim_id"]) if run["claim_id"] else None
        summary = _run_summary(uow, run)
    summary["claim_status"] = claim["status"] if claim else None
    return summary
