"""Improve runs (SPEC 6.1, 6.2): the tasks of the claiming use case (pipelines/improve/claiming.py).

Each task parses its payload, calls the use case and, once it has committed, enqueues what it
asks for: a pass's chain (one task per stage of the improve flow, run by tasks/engine.py, then
engram.improve.finish, which starts another pass or releases), or the rerun requests left.
"""

from __future__ import annotations

import logging
import uuid
from typing import Literal

from pydantic import BaseModel, Field

from engram.adapters.claims import Claims
from engram.adapters.redis_client import get_redis
from engram.adapters.store import Store
from engram.adapters.store.access import require_run
from engram.models.payloads import ImproveRequest, ImproveRunRequest
from engram.pipelines.improve.claiming import Claiming, Policy, Step, UnknownRun
from engram.pipelines.improve.flow import IMPROVE
from engram.pipelines.improve.flow import pending_work as probe
from engram.settings import get_settings
from engram.tasks.base import InvalidPayload, engram_task
from engram.tasks.engine import run_chain
from engram.tasks.sessions import run_summary
from engram.adapters.llm.gateway import gateway_from_settings
from engram.celery_app import app

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
    use = claiming()
    return follow(use, use.start(req.dataset_id, req.session_ids, req.trigger, max_llm_calls=req.max_llm_calls,
                                 max_tokens=req.max_tokens, node=node))


@engram_task("engram.improve.finish", payload=RunRequest)
def finish(self, req: RunRequest) -> dict:
    """Close the pass; re-check for new work (up to improve_max_passes) or release the claim."""
    use = claiming()
    try:
        step = use.finish(req.run_id)
    except UnknownRun as exc:
        raise InvalidPayload(str(exc)) from None
    return follow(use, step)


def claiming() -> Claiming:
    """The claiming use case on this process's store and Redis, with the settings' policy."""
    s = get_settings()
    return Claiming(Store().unit_of_work, Claims(get_redis()),
                    Policy(lease_seconds=s.lock_lease_seconds, max_passes=s.improve_max_passes,
                           max_llm_calls=s.improve_max_llm_calls, max_tokens=s.improve_max_tokens),
                    lambda uow, dataset, sessions, retries: pending_work(uow, dataset, sessions, retries))


def follow(use: Claiming, step: Step) -> dict:
    """After the use case committed: enqueue the pass's chain, or start the rerun requests left."""
    if step.run is not None:
        from engram.celery_app import app

        chain = run_chain(IMPROVE, step.run.run_id, step.run.stages)
        try:
            (chain | app.signature("engram.improve.finish", kwargs={"run_id": str(step.run.run_id)}, immutable=True)
             ).apply_async()
        except Exception as exc:  # never leave a run "running" that no chain will finish
            use.abandon(step, exc)
            raise
    if step.kick is not None:
        kick_reruns(step.kick, use)
    return step.answer


def pending_work(uow, dataset_id: uuid.UUID, session_ids: list[str], retries: bool = True) -> dict:
    settings = get_settings()
    return probe(uow, dataset_id, session_ids, settings, generates=_generates(settings), retries=retries)


def _generates(settings) -> bool:
    try:
        return gateway_from_settings(settings).generates
    except Exception:
        return False


def kick_reruns(dataset_id: uuid.UUID | None = None, use: Claiming | None = None) -> int:
    """Turn rerun requests (of one dataset, or all) into improve runs: one start per dataset."""
    by_dataset = (use or claiming()).reruns(dataset_id)
    for dataset, sessions in by_dataset.items():
        app.send_task("engram.improve.start", kwargs={
            "dataset_id": str(dataset), "session_ids": sessions, "trigger": "rerun"})
    return len(by_dataset)


@engram_task("engram.improve.run_status", payload=ImproveRunRequest)
def improve_run(self, req: ImproveRunRequest) -> dict:
    with Store().unit_of_work() as uow:
        run = uow.runs.flow_run(req.run_id, IMPROVE.name)
        require_run(uow, run, req.run_id, req.user, "read", what="improve run")
        claim = uow.improve.claim(run["claim_id"]) if run["claim_id"] else None
        summary = run_summary(uow, run)
    summary["claim_status"] = claim["status"] if claim else None
    return summary
