"""The stage engine's bookkeeping (tasks/engine.py): how a stage of each kind of run opens,
starts, holds its lease, is guarded and ends, in pipeline_runs / stage_runs (PipelineRuns) or
under an improve run's claim (ImproveRuns)."""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from engram.adapters.store import Store, UnitOfWork
from engram.pipelines.flow import Stage
from engram.pipelines.flows import BY_NAME
from engram.pipelines.improve import registry
from engram.pipelines.improve.claiming import FencedOut, claim_of, fence_scopes
from engram.pipelines.improve.flow import IMPROVE
from engram.settings import Settings
from engram.tasks.base import InvalidPayload
from engram.tasks.stage_context import Ports
from engram.adapters.claims import Claims, keep_alive
from engram.adapters.redis_client import get_redis

log = logging.getLogger("engram.engine")

DONE = ("completed", "skipped")


class RunBooks(Protocol):
    """How a stage of one kind of run opens, starts, holds its lease, is guarded and ends (the
    engine, tasks/engine.py, runs every stage through these)."""

    load_with_open: bool  # the stage's inputs are read in its opening transaction
    can_give_way: bool  # a stage waiting for other batches' vectors may re-send itself

    def open(self, uow: UnitOfWork, run_id: uuid.UUID, stage: Stage, settings: Settings) -> dict: ...
    def decide(self, uow: UnitOfWork, run: dict, stage: Stage, settings: Settings) -> tuple[str, str] | None: ...
    def ports(self, run: dict, settings: Settings) -> Ports: ...
    def start(self, uow: UnitOfWork, run: dict, stage: Stage) -> None: ...
    def lease(self, run: dict, settings: Settings) -> contextlib.AbstractContextManager[None]: ...
    def guard(self, uow: UnitOfWork, run: dict, stage: Stage) -> None: ...
    def finish(self, uow: UnitOfWork, run: dict, stage: Stage, status: str, *, output: Any = None,
               reason: str | None = None, used: dict | None = None, error: str | None = None) -> dict: ...
    def retrying(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None: ...
    def waiting(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None: ...
    def fail(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> tuple[dict, bool]: ...


@runtime_checkable
class ClaimedRunBooks(Protocol):
    """Books of runs held under a claim (improve): a stage may go on as a canvas (`defer`), and a
    write the claim's fencing number refused ends the stage and the run (`fenced_out`)."""

    def defer(self, uow: UnitOfWork, run: dict, stage: Stage, used: dict) -> None: ...
    def fenced_out(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> dict: ...


class Stop(Exception):
    """The stage must not run (or keep what it did): `result` is the task's answer."""

    def __init__(self, result: dict):
        super().__init__(result.get("reason") or result.get("status"))
        self.result = result


class PipelineRuns:
    """Runs and stages in pipeline_runs / stage_runs (cognify, graph passes, capture).

    A run completes when its last stage ends; a fatal stage's failure fails it (and stops its
    chain); a run forgotten meanwhile keeps nothing."""

    # A stage's inputs are read in its opening transaction (one transaction less per hop): a
    # pipeline stage's load is a few reads of its own run's rows.
    load_with_open = True
    can_give_way = True  # a stage waiting for other batches' vectors may re-send itself (waiting)

    def open(self, uow: UnitOfWork, run_id: uuid.UUID, stage: Stage, settings: Settings) -> dict:
        run, row = uow.runs.lock_with_stage(run_id, stage.name)
        if run is None:
            raise InvalidPayload(f"run {run_id} does not exist")
        if row is None:
            raise InvalidPayload(f"run {run_id} has no stage {stage.name!r}")
        if row["status"] in DONE:
            raise Stop({"run_id": str(run_id), "stage": stage.name, "status": row["status"], "redelivered": True})
        if run["status"] == "forgotten":
            raise Stop(_not_run(run_id, stage, "run forgotten"))
        if run["status"] == "failed":  # a stale message for a run that already failed: leave it for a retry
            raise Stop(_not_run(run_id, stage, "run failed"))
        return run

    def decide(self, uow, run: dict, stage: Stage, settings: Settings) -> tuple[str, str] | None:
        return None

    def ports(self, run: dict, settings: Settings) -> Ports:
        return Ports(settings, run["dataset_id"])

    def start(self, uow: UnitOfWork, run: dict, stage: Stage) -> None:
        uow.runs.start_stage(run["id"], stage.name)

    @contextlib.contextmanager
    def lease(self, run: dict, settings: Settings) -> Iterator[None]:
        """A heartbeat on the run while the stage works: the sweep leaves live runs alone."""
        stop = threading.Event()
        beat = threading.Thread(target=_heartbeat, args=(run["id"], stop,
                                                         max(1.0, settings.run_heartbeat_timeout_seconds / 4)),
                                daemon=True)
        beat.start()
        try:
            yield
        finally:
            stop.set()

    def guard(self, uow: UnitOfWork, run: dict, stage: Stage) -> None:
        """First in the write transaction: a run forgotten while its stage worked keeps nothing."""
        if uow.runs.lock(run["id"])["status"] == "forgotten":
            raise Stop(_not_run(run["id"], stage, "run forgotten"))

    def finish(self, uow: UnitOfWork, run: dict, stage: Stage, status: str, *, output: Any = None,
               reason: str | None = None, used: dict | None = None, error: str | None = None) -> dict:
        used = used or {}
        totals = uow.runs.finish_stage(run["id"], stage.name, status, output=output, reason=reason, error=error,
                                       usage=used)
        _complete_if_done(uow, run, totals["open_stages"])
        return {"run_id": str(run["id"]), "stage": stage.name, "status": status, "reason": reason,
                **accounting(used, totals)}

    def retrying(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None:
        uow.runs.finish_stage(run["id"], stage.name, "pending", error=f"retrying: {message}", usage=used)

    def waiting(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None:
        uow.runs.finish_stage(run["id"], stage.name, "pending", reason=f"waiting: {message}", usage=used)

    def fail(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> tuple[dict, bool]:
        """Record the failure; (the task's answer, whether the task raises: a fatal stage stops its chain)."""
        if uow.runs.lock(run["id"])["status"] == "forgotten":
            return _not_run(run["id"], stage, "run forgotten"), False
        totals = uow.runs.finish_stage(run["id"], stage.name, "failed", error=message, usage=used)
        if stage.optional:  # returning (not raising) lets the chain go on to the next stage
            _complete_if_done(uow, run, totals["open_stages"])
            return {"run_id": str(run["id"]), "stage": stage.name, "status": "failed", "error": message}, False
        uow.runs.finish_run(run["id"], "failed", error=f"{stage.name}: {message}")
        return {}, True


def _not_run(run_id, stage: Stage, reason: str) -> dict:
    return {"run_id": str(run_id), "stage": stage.name, "status": "not_run", "reason": reason}


def _heartbeat(run_id: uuid.UUID, stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        try:
            with Store().unit_of_work() as uow:
                uow.runs.heartbeat(run_id)
        except Exception:  # a missed heartbeat only risks an early sweep, never data
            log.warning("heartbeat failed for run %s", run_id, exc_info=True)


def _complete_if_done(uow: UnitOfWork, run: dict, open_stages: int) -> None:
    """The run ends with its last stage to end (`open_stages`: its stages still pending or
    running, as finish_stage counted them). In a run that has not failed, a failed stage is an
    optional one: it does not hold the run open, and its error is the run's note; the run is
    `partial` when its flow says so (capture), else `completed`."""
    if open_stages:
        return
    failed = [f"{s['stage']}: {s['error']}" for s in uow.runs.stages(run["id"]) if s["status"] == "failed"]
    flow = BY_NAME.get(run["pipeline"])
    status = "partial" if failed and flow is not None and flow.partial else "completed"
    uow.runs.finish_run(run["id"], status, error=("optional stage failed: " + "; ".join(failed)) if failed else None)


def accounting(used: dict, run: dict) -> dict:
    """LLM calls and tokens of this stage and of its run so far: Flower shows them in the task result."""
    return {"llm_calls": used.get("calls", 0),
            "tokens": used.get("prompt_tokens", 0) + used.get("completion_tokens", 0),
            "run_llm_calls": run["llm_calls"], "run_tokens": run["tokens"]}


class ImproveRuns:
    """Improve runs (pipeline_runs rows of the improve flow, read with their claim; SPEC 6.1).

    The run belongs to a claim: the claim's lease is renewed while a stage works, and every
    write transaction first checks the claim's fencing number (a stale one: FencedOut, the stage
    is fenced_out and the run lost). A failure never stops the chain: later stages decide for
    themselves (a fatal one's failure aborts them) and engram.improve.finish ends the run."""

    load_with_open = False  # an improve stage loads under its claim's renewed lease
    can_give_way = False

    def open(self, uow: UnitOfWork, run_id: uuid.UUID, stage: Stage, settings: Settings) -> dict:
        run = uow.runs.flow_run(run_id, IMPROVE.name, lock=True)
        if run is None:
            raise InvalidPayload(f"improve run {run_id} does not exist")
        rows = {r["stage"]: r for r in uow.runs.stages(run_id)}
        if stage.name not in rows:
            raise InvalidPayload(f"improve run {run_id} has no stage {stage.name!r}")
        if rows[stage.name]["status"] in registry.DONE:
            raise Stop({"run_id": str(run_id), "stage": stage.name, "status": rows[stage.name]["status"],
                        "redelivered": True})
        return dict(run, stage_rows=rows, claim=uow.improve.claim(run["claim_id"]))

    def decide(self, uow, run: dict, stage: Stage, settings: Settings) -> tuple[str, str] | None:
        rows = run["stage_rows"]
        if run["status"] == "lost" or any(r["status"] == "fenced_out" for r in rows.values()):
            return ("skipped", "claim_lost")
        aborted_by = next((r["stage"] for r in rows.values() if r["fatal"] and r["status"] == "failed"), None)
        decision = registry.decide(stage, aborted_by=aborted_by, budget=registry.Budget(**run["budget"]),
                                   llm_calls=run["llm_calls"], tokens=run["tokens"], disabled=settings.improve_disabled,
                                   opt_in=settings.improve_opt_in, session_ids=run["session_ids"])
        return (decision.status, decision.reason) if decision else None

    def ports(self, run: dict, settings: Settings) -> Ports:
        return Ports(settings, run["dataset_id"], write=lambda: _fenced(run))

    def start(self, uow: UnitOfWork, run: dict, stage: Stage) -> None:
        uow.runs.start_stage(run["id"], stage.name)

    @contextlib.contextmanager
    def lease(self, run: dict, settings: Settings) -> Iterator[None]:
        """The claim's lease, renewed while the stage works (its row records each renewal)."""
        claims = Claims(get_redis())
        claim = claim_of(run["claim"], settings.lock_lease_seconds)
        if not claims.renew(claim):
            raise FencedOut("the claim's lease expired before the stage started")
        renewed(run["claim"]["id"])
        with keep_alive(claims, claim, on_renew=lambda: renewed(run["claim"]["id"])):
            yield

    def guard(self, uow: UnitOfWork, run: dict, stage: Stage) -> None:
        """First in the write transaction: the claim's fencing number (FencedOut if it was taken over)."""
        uow.improve.check_fence(fence_scopes(run["dataset_id"], run["session_ids"]), run["fence"])

    def finish(self, uow: UnitOfWork, run: dict, stage: Stage, status: str, *, output: Any = None,
               reason: str | None = None, used: dict | None = None, error: str | None = None) -> dict:
        used = used or {}
        uow.runs.finish_stage(run["id"], stage.name, status, reason=reason, error=error,
                              output=output if isinstance(output, dict) else {}, usage=used)
        return {"run_id": str(run["id"]), "stage": stage.name, "status": status, "reason": reason, "error": error,
                "llm_calls": used.get("calls", 0),  # shown in Flower
                "tokens": used.get("prompt_tokens", 0) + used.get("completion_tokens", 0)}

    def retrying(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None:
        uow.runs.finish_stage(run["id"], stage.name, "pending", output={}, error=f"retrying: {message}", usage=used)

    def waiting(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None:
        uow.runs.finish_stage(run["id"], stage.name, "pending", output={}, reason=f"waiting: {message}", usage=used)

    def fail(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> tuple[dict, bool]:
        return self.finish(uow, run, stage, "failed", used=used, error=message), False

    def defer(self, uow: UnitOfWork, run: dict, stage: Stage, used: dict) -> None:
        uow.runs.finish_stage(run["id"], stage.name, "running", output={}, usage=used)

    def fenced_out(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> dict:
        result = self.finish(uow, run, stage, "fenced_out", reason="claim_lost", used=used, error=message)
        uow.runs.finish_run(run["id"], "lost", error=message)
        uow.improve.close_claim(run["claim_id"], "lost", note=message)
        return result


def renewed(claim_id: uuid.UUID) -> None:
    with Store().unit_of_work() as uow:
        uow.improve.renewed(claim_id)


@contextlib.contextmanager
def _fenced(run: dict) -> Iterator[UnitOfWork]:
    """A unit of work whose first statement checks (and records) the run's claim fence."""
    with Store().unit_of_work() as uow:
        IMPROVE_RUNS.guard(uow, run, None)
        yield uow


IMPROVE_RUNS = ImproveRuns()
BOOKS: dict[str, RunBooks] = {"pipeline": PipelineRuns(), "improve": IMPROVE_RUNS}
