"""What every Engram task shares: payload validation, the retry policy, stage bookkeeping."""

from __future__ import annotations

import contextvars
import logging
import random
import threading
import traceback
import uuid
from collections.abc import Callable
from typing import Any

import redis
from celery import Task
from kombu.exceptions import OperationalError as KombuOperationalError
from pydantic import BaseModel
from sqlalchemy.exc import DBAPIError, OperationalError

from engram.adapters.llm import usage
from engram.adapters.llm.errors import LLMTransientError
from engram.adapters.store import Store, UnitOfWork
from engram.celery_app import PUBLIC_TASKS as PUBLIC_TASK_NAMES
from engram.celery_app import app
from engram.settings import get_settings

log = logging.getLogger("engram.tasks")

# Only these are worth a retry; anything else (bad input, invalid LLM output) fails at once.
TRANSIENT: tuple[type[BaseException], ...] = (
    LLMTransientError,
    OperationalError,
    redis.ConnectionError,
    redis.TimeoutError,
    ConnectionError,
    TimeoutError,
    KombuOperationalError,  # the broker went away while publishing
)


from engram.tasks.validation import InvalidPayload, parse_payload  # noqa: E402,F401 - re-exported


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, TRANSIENT)


def backoff_seconds(retries: int) -> float:
    """Exponential backoff with full jitter."""
    s = get_settings()
    ceiling = min(s.retry_backoff_max_seconds, s.retry_backoff_base_seconds * (2**retries))
    return random.uniform(ceiling / 2, ceiling)


# The producer contract (celery_app.PUBLIC_TASKS, also their routes): tasks any broker client may
# call, each checking the caller's grants. Every other engram.* task is internal and runs only
# messages Engram signed (adapters/signing).
PUBLIC_TASKS = frozenset(PUBLIC_TASK_NAMES)


class EngramTask(Task):
    payload_model: type[BaseModel] | None = None
    public = False  # engram_task(..., public=True) adds a producer task to the contract
    typing = False  # validation is ours, with a clear message

    def __call__(self, *args, **kwargs):
        request = self.request
        if not (self.public or self.name in PUBLIC_TASKS) and not (request.called_directly or request.is_eager):
            _verify(self.name, kwargs, request)  # before anything else: nothing of a forged message runs
        if self.payload_model is not None:
            return self._accepting(parse_payload(self.name, self.payload_model, args, kwargs))
        return super().__call__(*args, **kwargs)

    def _accepting(self, payload):
        """Every task rides out a short database/broker outage: retried with backoff, within a bound.

        Stage tasks retry their own bodies (the engine); this covers what runs outside them, e.g.
        a stage's opening transaction or an accepting task such as remember."""
        if self.request.called_directly or self.request.is_eager:
            return Task.__call__(self, payload)
        try:
            return Task.__call__(self, payload)
        except Exception as exc:
            settings = get_settings()
            retries = self.request.retries or 0
            if _is_transient(exc) and retries < settings.accept_max_retries:
                log.warning("%s: transient %s, retry %d: %s", self.name, type(exc).__name__, retries + 1, exc)
                raise self.retry(exc=exc, countdown=backoff_seconds(retries), max_retries=settings.accept_max_retries)
            raise


def _verify(name: str, kwargs: dict, request) -> None:
    from engram.adapters.signing import HEADER, signing_key, verify

    signature = getattr(request, HEADER, None) or (getattr(request, "headers", None) or {}).get(HEADER)
    verify(signing_key(get_settings()), name, kwargs, signature)


def engram_task(name: str, payload: type[BaseModel] | None = None, public: bool = False, **options) -> Callable:
    """Register a task with the Engram base; `payload` is validated before the body runs.

    public: any broker client may call it (the body checks the caller's grants); otherwise the
    task is internal and runs only messages Engram signed."""

    def decorate(fn: Callable) -> Task:
        return app.task(name=name, base=EngramTask, bind=True, payload_model=payload,
                        public=public or name in PUBLIC_TASKS, **options)(fn)

    return decorate


# ------------------------------------------------------------------ stage bookkeeping


class StageSkipped(Exception):
    """Raised by a stage body that decides it has nothing to do (recorded as skipped)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _heartbeat(store: Store, run_id: uuid.UUID, stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        try:
            with store.unit_of_work() as uow:
                uow.runs.heartbeat(run_id)
        except Exception:  # a missed heartbeat only risks an early sweep, never data
            log.warning("heartbeat failed for run %s", run_id, exc_info=True)


def execute_stage(
    task: Task,
    run_id: uuid.UUID,
    stage: str,
    *,
    load: Callable[[UnitOfWork], Any],
    compute: Callable[[Any], Any],
    persist: Callable[[UnitOfWork, Any, Any], Any] | None = None,
    optional: bool = False,
) -> dict:
    """Run one stage of a run: skip if done, else load → compute (no transaction) → persist.

    compute's return value is the stage's stored output unless persist returns one (JSON).

    optional: a stage whose failure (after its retries) is recorded on the stage alone; the
    run goes on and ends "completed" with the failure named in its error (maintenance passes:
    the ingested data they examine stays committed and valid).

    The stage's output and status are written in the same transaction as its data, so a
    crash leaves either the whole stage or none of it; a redelivered message finds the
    stage completed and does nothing.
    """
    store = Store()
    settings = get_settings()
    with store.unit_of_work() as uow:
        run = uow.runs.lock(run_id)
        if run is None:
            raise InvalidPayload(f"run {run_id} does not exist")
        row = uow.runs.stage(run_id, stage)
        if row is None:
            raise InvalidPayload(f"run {run_id} has no stage {stage!r}")
        if row["status"] in ("completed", "skipped"):
            return {"run_id": str(run_id), "stage": stage, "status": row["status"], "redelivered": True}
        if run["status"] == "forgotten":
            return {"run_id": str(run_id), "stage": stage, "status": "not_run", "reason": "run forgotten"}
        if run["status"] == "failed":
            # A stale message for a run that already failed: leave it for an explicit retry.
            return {"run_id": str(run_id), "stage": stage, "status": "not_run", "reason": "run failed"}
        uow.runs.start_stage(run_id, stage)
        inputs = load(uow)

    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeat, args=(store, run_id, stop, max(1.0, settings.run_heartbeat_timeout_seconds / 4)),
        daemon=True,
    )
    beat.start()
    try:
        with usage.usage_scope() as used:
            try:
                output = contextvars.copy_context().run(compute, inputs)
                status, reason = "completed", None
            except StageSkipped as skip:
                output, status, reason = None, "skipped", skip.reason
    except Exception as exc:
        stop.set()
        return _stage_failed(task, store, run_id, stage, exc, used.as_dict(), optional)
    finally:
        stop.set()

    with store.unit_of_work() as uow:
        if uow.runs.lock(run_id)["status"] == "forgotten":  # forgotten while computing: keep nothing
            return {"run_id": str(run_id), "stage": stage, "status": "not_run", "reason": "run forgotten"}
        if persist is not None and status == "completed":
            output = persist(uow, inputs, output)
        uow.runs.finish_stage(run_id, stage, status, output=output, reason=reason, usage=used.as_dict())
        _complete_if_done(uow, run_id)
        totals = uow.runs.get(run_id)
    return {"run_id": str(run_id), "stage": stage, "status": status, "reason": reason,
            **accounting(used.as_dict(), totals)}


def accounting(used: dict, run: dict) -> dict:
    """LLM calls and tokens of this stage and of its run so far: Flower shows them in the task result."""
    return {"llm_calls": used.get("calls", 0),
            "tokens": used.get("prompt_tokens", 0) + used.get("completion_tokens", 0),
            "run_llm_calls": run["llm_calls"], "run_tokens": run["tokens"]}


def _complete_if_done(uow: UnitOfWork, run_id: uuid.UUID) -> None:
    # In a run that has not failed, a failed stage is an optional one: it does not hold the run open.
    stages = uow.runs.stages(run_id)
    if any(s["status"] not in ("completed", "skipped", "failed") for s in stages):
        return
    failed = [f"{s['stage']}: {s['error']}" for s in stages if s["status"] == "failed"]
    uow.runs.finish_run(run_id, "completed", error=("optional stage failed: " + "; ".join(failed)) if failed else None)


def _stage_failed(task: Task, store: Store, run_id: uuid.UUID, stage: str, exc: Exception, used: dict,
                  optional: bool = False) -> dict:
    message = f"{type(exc).__name__}: {exc}"
    retries = task.request.retries or 0
    if _is_transient(exc) and retries < task.max_retries:
        with store.unit_of_work() as uow:
            uow.runs.finish_stage(run_id, stage, "pending", error=f"retrying: {message}", usage=used)
        raise task.retry(exc=exc, countdown=backoff_seconds(retries))
    log.warning("stage %s of run %s failed: %s\n%s", stage, run_id, message, traceback.format_exc())
    with store.unit_of_work() as uow:
        if uow.runs.lock(run_id)["status"] == "forgotten":
            return {"run_id": str(run_id), "stage": stage, "status": "not_run", "reason": "run forgotten"}
        uow.runs.finish_stage(run_id, stage, "failed", error=message, usage=used)
        if optional:
            _complete_if_done(uow, run_id)
        else:
            uow.runs.finish_run(run_id, "failed", error=f"{stage}: {message}")
    if optional:  # returning (not raising) lets the chain go on to the next stage
        return {"run_id": str(run_id), "stage": stage, "status": "failed", "error": message}
    raise exc
