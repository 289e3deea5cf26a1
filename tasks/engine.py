"""The one stage runner: executes any stage declared in pipelines/ (pipelines/flow.py).

For every stage of every flow it owns the transitions a stage goes through:

    open (one transaction: lock the run and read its stage's row in one statement, skip a
          done stage, the flow's policy, the stage's gate, mark it running; a pipeline run's
          stage also loads its inputs here, an improve run's once its claim is renewed)
    → compute (no transaction; under the run's lease: heartbeat, or the improve claim's renewal)
    → persist (one transaction that first checks the run still owns its data: not forgotten,
               or the improve claim's fencing number; then the stage's writes, its output
               and status, and the run's end when it was the last stage)
    → after-commit hooks (optimisations the committed rows now allow; a failing hook is logged
                          and never fails the committed stage nor stops its chain)

A stage that publishes documents (improve's) stores them in a guarded transaction of their own
and cognifies them here before persist; a stage that went on as a canvas ends through
end_deferred. A failure anywhere (load, compute, publish or persist) ends the same way: a transient error (LLM,
database, broker) is retried with backoff, anything else is recorded on the stage at once and
the flow's failure policy decides the run (fatal: the run fails; optional: the run goes on).
Celery tasks, their routes and the chains of new runs are derived from the declarations here.
What a stage sees lives in tasks/stage_context.py (Ports, Context); how each kind of run opens,
leases and ends a stage in tasks/run_books.py (PipelineRuns, ImproveRuns).
"""

from __future__ import annotations

import contextvars
import logging
import traceback
import uuid
from collections.abc import Callable
from typing import Any

from celery import Task, chain, chord, group
from pydantic import BaseModel, Field

from engram.adapters.errors import is_transient
from engram.adapters.llm import usage
from engram.adapters.store import Store
from engram.adapters.store.runs import LABEL_MAX
from engram.pipelines.cognify.embedding import VectorsPending
from engram.pipelines.flow import Deferred, Flow, Stage, StageSkipped, Verdict, all_stages
from engram.pipelines.flows import FLOWS, flow_named
from engram.pipelines.improve.claiming import FencedOut
from engram.settings import get_settings
from engram.tasks.base import backoff_seconds, engram_task
from engram.tasks.observe import observed_stage
from engram.tasks.run_books import BOOKS, ClaimedRunBooks, RunBooks, Stop
from engram.tasks.stage_context import Context
from engram.celery_app import app

log = logging.getLogger("engram.engine")

class StageRequest(BaseModel):
    run_id: uuid.UUID
    # Times this stage gave its worker back to wait for vectors other batches were embedding
    # (set by the engine on the message it re-sends; not counted against transient retries).
    waited: int = Field(default=0, ge=0, le=1)
    # What the stage is about, for operators (Flower shows a task's kwargs, metrics and traces
    # label with them): names only, never a document's text. The stage reads its run, not these.
    dataset: str | None = Field(default=None, max_length=200)
    document: str | None = Field(default=None, max_length=LABEL_MAX)


# ------------------------------------------------------------------ the runner


def run_stage(task: Task, stage: Stage, run_id: uuid.UUID, book: RunBooks | None = None, waited: int = 0) -> dict:
    """Execute one declared stage of one run (see the module doc for the transitions)."""
    book = book or BOOKS["pipeline"]
    store = Store()
    settings = get_settings()
    inputs: Any = _UNREAD
    try:
        with store.unit_of_work() as uow:
            run = book.open(uow, run_id, stage, settings)
            ctx = Context(run, settings, book.ports(run, settings), stage)
            # Once (then it waits for its vectors), and only on a worker: a run in this process
            # (cognify_inline) has no queue to come back through.
            ctx.give_way = (book.can_give_way and waited == 0
                            and not (task.request.called_directly or task.request.is_eager))
            decision = book.decide(uow, run, stage, settings)
            if decision is None and stage.gate is not None:
                decision = stage.gate(uow, ctx)
            if decision is not None:
                return book.finish(uow, run, stage, decision[0], reason=decision[1])
            book.start(uow, run, stage)
            if book.load_with_open:
                inputs = _load(uow, stage, ctx)
    except Stop as stop:
        return stop.result
    except _LoadFailed as failed:  # rolled back with the start: recorded as any stage failure
        with usage.usage_scope() as used:
            return _failed(task, store, book, run, stage, failed.error, used.as_dict(), waited)

    with usage.usage_scope() as used:
        try:
            with book.lease(run, settings):
                result = _work(store, book, stage, ctx, used, inputs)
        except Stop as stop:
            return stop.result
        except _Deferring as deferring:
            deferred = deferring.deferred
        except Exception as exc:
            return _failed(task, store, book, run, stage, exc, used.as_dict(), waited)
        else:
            _run_after_commit(ctx, stage)
            return result
    # The stage goes on as a canvas; its last task records the stage's end (Ignore: not a failure).
    with store.unit_of_work() as uow:
        book.defer(uow, run, stage, used.as_dict())
    raise task.replace(app.signature(deferred.task, kwargs=deferred.kwargs))


def _run_after_commit(ctx: Context, stage: Stage) -> None:
    """The committed stage stands whatever its hooks do: a hook (an optimisation such as waking
    the embed queue) that fails is logged, and the task still returns, so Celery sends the
    chain's next link. Raising here would leave the run between stages with nothing queued."""
    for hook in ctx.after_commit_hooks():
        try:
            hook()
        except Exception:  # noqa: BLE001 - see the docstring
            log.warning("after-commit hook %s of stage %s (run %s) failed; the stage stands",
                        getattr(hook, "__qualname__", hook), stage.name, ctx.run["id"], exc_info=True)


class _Deferring(Exception):
    def __init__(self, deferred: Deferred):
        super().__init__(deferred.task)
        self.deferred = deferred


_UNREAD = object()  # a stage's inputs not read yet (its book loads them in their own transaction)


class _LoadFailed(Exception):
    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def _load(uow, stage: Stage, ctx: Context) -> Any:
    """A stage's inputs, read in its opening transaction; a failure leaves that transaction
    (the stage is not started) and takes the one failure path."""
    try:
        return stage.load(uow, ctx) if stage.load is not None else None
    except Exception as exc:
        raise _LoadFailed(exc) from exc


def _work(store: Store, book: RunBooks, stage: Stage, ctx: Context, used, inputs: Any = _UNREAD) -> dict:
    """(load →) compute (→ publish, cognify) → persist, each failure propagating to the one failure path."""
    if inputs is _UNREAD:
        with store.unit_of_work() as uow:
            inputs = stage.load(uow, ctx) if stage.load is not None else None
    try:
        result = contextvars.copy_context().run(stage.compute, inputs, ctx)
        status, reason = "completed", None
    except StageSkipped as skip:
        result, status, reason = None, "skipped", skip.reason
    if isinstance(result, Deferred):
        if not isinstance(book, ClaimedRunBooks):
            raise TypeError(f"stage {stage.name} deferred, but its runs cannot continue as a canvas")
        raise _Deferring(result)
    if stage.publish is not None and status == "completed":
        result = _publish(store, book, stage, ctx, inputs, result)
    with store.unit_of_work() as uow:
        book.guard(uow, ctx.run, stage)
        output = result
        if stage.persist is not None and status == "completed":
            output = stage.persist(uow, ctx, inputs, result)
        return _finish(book, uow, ctx.run, stage, output, used.as_dict(), status, reason)


def _publish(store: Store, book: RunBooks, stage: Stage, ctx: Context, inputs: Any, result: Any) -> Any:
    """The documents a stage publishes, stored in a guarded transaction of their own, then
    cognified here, in order (their LLM use is the stage's); persist gets the rest."""
    with store.unit_of_work() as uow:
        book.guard(uow, ctx.run, stage)
        published = stage.publish(uow, ctx, inputs, result)
    for run_id, stages in published.runs:
        ctx.ports.cognify(run_id, stages)
    return published.result


def _finish(book: RunBooks, uow, run: dict, stage: Stage, output: Any, used: dict, status: str = "completed",
            reason: str | None = None) -> dict:
    """Record the stage's end: the one its persist gave (a Verdict), else `status`."""
    if isinstance(output, Verdict):
        return book.finish(uow, run, stage, output.status, output=output.output, reason=output.reason, used=used,
                           error=output.error)
    return book.finish(uow, run, stage, status, output=output, reason=reason, used=used)


def end_deferred(stage: Stage, run_id: uuid.UUID, conclude: Callable[[Context], Any], used: dict,
                 failed_output: Any = None) -> dict:
    """The end of a stage that went on as a canvas (its last task calls this): `conclude` turns the
    canvas's results into what the stage's persist writes, then the stage ends as any other (one
    guarded transaction, its verdict, the after-commit hooks). The canvas is spent: a failure is
    recorded at once (with `failed_output`), a refused fence ends the run lost."""
    book = BOOKS[_flow_of(stage.task).runs]
    store, settings = Store(), get_settings()
    try:
        with store.unit_of_work() as uow:
            run = book.open(uow, run_id, stage, settings)
    except Stop as stop:
        return stop.result
    ctx = Context(run, settings, book.ports(run, settings), stage)
    try:
        result = contextvars.copy_context().run(conclude, ctx)
        with store.unit_of_work() as uow:
            book.guard(uow, run, stage)
            output = stage.persist(uow, ctx, None, result) if stage.persist is not None else result
            answer = _finish(book, uow, run, stage, output, used)
    except Exception as exc:  # noqa: BLE001 - every failure ends the stage, as in the runner
        with store.unit_of_work() as uow:
            if isinstance(exc, FencedOut) and isinstance(book, ClaimedRunBooks):
                return book.fenced_out(uow, run, stage, str(exc), used)
            log.exception("the end of stage %s of run %s failed", stage.name, run_id)
            return book.finish(uow, run, stage, "failed", output=failed_output, used=used,
                               error=f"{type(exc).__name__}: {exc}")
    _run_after_commit(ctx, stage)
    return answer


def _failed(task: Task, store: Store, book: RunBooks, run: dict, stage: Stage, exc: Exception, used: dict,
            waited: int = 0) -> dict:
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, FencedOut) and isinstance(book, ClaimedRunBooks):
        with store.unit_of_work() as uow:
            return book.fenced_out(uow, run, stage, str(exc), used)
    if isinstance(exc, VectorsPending):  # not a failure: the stage comes back when its vectors should be in
        with store.unit_of_work() as uow:
            book.waiting(uow, run, stage, str(exc), used)
        kwargs = {**(task.request.kwargs or {}), "run_id": str(run["id"]), "waited": waited + 1}
        raise task.retry(countdown=exc.retry_in, kwargs=kwargs,
                         max_retries=task.max_retries + waited + 1)
    retries = (task.request.retries or 0) - waited  # a wait for vectors is no transient failure
    if stage.retry_transient and is_transient(exc) and retries < task.max_retries:
        with store.unit_of_work() as uow:
            book.retrying(uow, run, stage, message, used)
        raise task.retry(exc=exc, countdown=backoff_seconds(retries), max_retries=task.max_retries + waited)
    log.warning("stage %s of run %s failed: %s\n%s", stage.name, run["id"], message,
                "".join(traceback.format_exception(exc)))
    with store.unit_of_work() as uow:
        result, reraise = book.fail(uow, run, stage, message, used)
    if reraise:
        raise exc
    return result


# ------------------------------------------------------------------ derived: tasks, routes, chains


STAGES: dict[str, Stage] = all_stages(FLOWS)


def _register(stage: Stage, book: RunBooks, flow: str):
    def body(self, req: StageRequest) -> dict:
        return observed_stage(self, flow, stage.name, req.run_id, req.dataset, req.document,
                              lambda: run_stage(self, stage, req.run_id, book, req.waited))

    body.__name__ = body.__qualname__ = f"{stage.namespace}_{stage.name}"
    # track_started=False: a stage's state lives in its run's rows (and Flower sees task-started
    # events); a STARTED result write per hop would be one more Redis round trip nobody reads.
    return engram_task(stage.task, payload=StageRequest, max_retries=get_settings().task_max_retries,
                       track_started=False)(body)


def _flow_of(task: str) -> Flow:
    return next(flow for flow in FLOWS if any(s.task == task for s in flow.tasks()))


TASKS = {name: _register(stage, BOOKS[_flow_of(name).runs], _flow_of(name).name) for name, stage in STAGES.items()}


def run_labels(run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, str]]:
    """Each run's dataset and document names (for its stage tasks' kwargs), in one read."""
    with Store().unit_of_work() as uow:
        return uow.runs.labels(run_ids)


def run_chain(flow: Flow, run_id: uuid.UUID, stages: list[str], labels: dict[str, str] | None = None):
    """The run's stage tasks in order; `labels` (default: read now) name its dataset and document."""
    if labels is None:
        labels = run_labels([run_id]).get(run_id, {})
    kwargs = {"run_id": str(run_id), **labels}
    return chain(*(app.signature(flow.stage(s).task, kwargs=kwargs, immutable=True) for s in stages))


def start_runs(runs: list[tuple[uuid.UUID, list[str]]], flow: Flow | str = "cognify") -> None:
    """One chain per run (enqueue only after the runs' rows are committed); several runs of a
    cognify accept form a group with a completion callback."""
    flow = flow_named(flow) if isinstance(flow, str) else flow
    runs = [(r, s) for r, s in runs if s]
    if not runs:
        return
    labels = run_labels([r for r, _ in runs])
    if len(runs) == 1:
        run_chain(flow, *runs[0], labels.get(runs[0][0], {})).apply_async()
        return
    callback = app.signature("engram.cognify.finish_dataset", kwargs={"run_ids": [str(r) for r, _ in runs]},
                             immutable=True)
    chord(group(run_chain(flow, r, s, labels.get(r, {})) for r, s in runs))(callback)


def cognify_inline(run_id: uuid.UUID, stages: list[str]) -> None:
    """Run a cognify run's stages in this process, in order (the same task code as the chain)."""
    flow = flow_named("cognify")
    for stage in stages:
        out = app.tasks[flow.stage(stage).task](run_id=str(run_id))
        if isinstance(out, dict) and out.get("status") in ("not_run", "failed"):
            raise RuntimeError(f"cognify run {run_id} stage {stage}: {out.get('reason') or out.get('error')}")
