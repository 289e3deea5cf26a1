"""The one stage runner: executes any stage declared in pipelines/ (pipelines/flow.py).

For every stage of every flow it owns the transitions a stage goes through:

    open (one transaction: lock the run, skip a done stage, the flow's policy, the stage's
          gate, mark it running, load its inputs)
    → compute (no transaction; under the run's lease: heartbeat, or the improve claim's renewal)
    → persist (one transaction that first checks the run still owns its data: not forgotten,
               or the improve claim's fencing number; then the stage's writes, its output
               and status, and the run's end when it was the last stage)
    → after-commit hooks (optimisations the committed rows now allow; a failing hook is logged
                          and never fails the committed stage nor stops its chain)

A failure anywhere (load, compute or persist) ends the same way: a transient error (LLM,
database, broker) is retried with backoff, anything else is recorded on the stage at once and
the flow's failure policy decides the run (fatal: the run fails; optional: the run goes on).
Celery tasks, their routes and the chains of new runs are derived from the declarations here.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from celery import Task, chain, chord, group
from pydantic import BaseModel

from engram.adapters.errors import is_transient
from engram.adapters.llm import usage
from engram.adapters.store import Store, UnitOfWork
from engram.pipelines.flow import Deferred, Flow, Stage, StageSkipped, all_stages
from engram.pipelines.flows import FLOWS, flow_named
from engram.pipelines.improve.registry import DONE as IMPROVE_DONE
from engram.settings import Settings, get_settings
from engram.tasks.base import InvalidPayload, backoff_seconds, engram_task

log = logging.getLogger("engram.engine")

DONE = ("completed", "skipped")


class StageRequest(BaseModel):
    run_id: uuid.UUID


# ------------------------------------------------------------------ what a stage sees


class Ports:
    """What stage functions reach outside their unit of work: the LLM, the embedder, the store."""

    def __init__(self, settings: Settings, dataset_id: uuid.UUID | None = None,
                 write: Callable[[], Any] | None = None):
        self.settings, self.dataset_id = settings, dataset_id
        self._write = write

    def llm(self):
        from engram.adapters.llm.gateway import gateway_from_settings

        return gateway_from_settings(self.settings)

    def embedder(self):
        from engram.adapters.embed import get_embedder

        return get_embedder(self.settings)

    def read(self):
        return Store().unit_of_work()

    def write(self):
        """A unit of work for the stage's own writes (fenced for an improve run)."""
        return self._write() if self._write is not None else Store().unit_of_work()

    def vectors_for(self, texts: list[str], item_id: uuid.UUID):
        """One vector per text from the fleet's shared embedding batches (stored ones reused)."""
        from engram.pipelines.cognify.embedding import vectors_for
        from engram.tasks.embedding import count_embedded, embed_policy

        embedder = self.embedder()
        vectors, stats = vectors_for(texts, item_id, store=Store(), embedder=embedder,
                                     policy=embed_policy(self.settings))
        count_embedded(embedder.name, stats.embedded)
        return vectors, stats

    def schedule_embedding(self) -> None:
        from engram.tasks.embedding import schedule_batch

        schedule_batch()

    def cognify(self, run_id: uuid.UUID, stages: list[str]) -> None:
        """Run a cognify run's stages in this process, in order (the same stage tasks as the chain)."""
        cognify_inline(run_id, stages)

    def add_document(self, uow, item, *, source: str, node_sets: list[str]) -> tuple[uuid.UUID, uuid.UUID, list[str]]:
        """Store a document a stage wrote: (item id, its cognify run id, stages still to run);
        an unchanged known document has none (a failed one is reopened)."""
        from engram.pipelines.cognify.flow import open_run

        item_id, created = uow.graph.add_item(self.dataset_id, item.digest, item.text, name=item.name, mime=item.mime,
                                              source=source, node_sets=node_sets)
        previous = None if created else uow.runs.latest_for_item(item_id)
        if previous is not None:
            if previous["status"] == "failed":
                return item_id, previous["id"], uow.runs.reopen(previous["id"])
            return item_id, previous["id"], []
        run_id = uuid.uuid4()
        return item_id, run_id, open_run(uow, run_id, self.dataset_id, item_id, options={},
                                         params={"doc_type": item.doc_type, "name": item.name})


class Context:
    """The run a stage works for (its row and ids), the stage, settings, ports, after-commit hooks."""

    def __init__(self, run: dict, settings: Settings, ports: Ports, stage: Stage | None = None):
        self.run, self.settings, self.ports, self.stage = run, settings, ports, stage
        self._after: list[Callable[[], None]] = []

    run_id = property(lambda self: self.run["id"])
    dataset_id = property(lambda self: self.run["dataset_id"])
    session_ids = property(lambda self: list(self.run.get("session_ids") or []))
    snapshot = property(lambda self: self.run.get("snapshot") or {})

    def after_commit(self, hook: Callable[[], None]) -> None:
        self._after.append(hook)


# ------------------------------------------------------------------ bookkeeping


class Stop(Exception):
    """The stage must not run (or keep what it did): `result` is the task's answer."""

    def __init__(self, result: dict):
        super().__init__(result.get("reason") or result.get("status"))
        self.result = result


class PipelineRuns:
    """Runs and stages in pipeline_runs / stage_runs (cognify, graph passes, capture).

    A run completes when its last stage ends; a fatal stage's failure fails it (and stops its
    chain); a run forgotten meanwhile keeps nothing."""

    def open(self, uow: UnitOfWork, run_id: uuid.UUID, stage: Stage, settings: Settings) -> dict:
        run = uow.runs.lock(run_id)
        if run is None:
            raise InvalidPayload(f"run {run_id} does not exist")
        row = uow.runs.stage(run_id, stage.name)
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
               reason: str | None = None, used: dict | None = None) -> dict:
        used = used or {}
        uow.runs.finish_stage(run["id"], stage.name, status, output=output, reason=reason, usage=used)
        _complete_if_done(uow, run["id"])
        totals = uow.runs.get(run["id"])
        return {"run_id": str(run["id"]), "stage": stage.name, "status": status, "reason": reason,
                **accounting(used, totals)}

    def retrying(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None:
        uow.runs.finish_stage(run["id"], stage.name, "pending", error=f"retrying: {message}", usage=used)

    def fail(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> tuple[dict, bool]:
        """Record the failure; (the task's answer, whether the task raises: a fatal stage stops its chain)."""
        if uow.runs.lock(run["id"])["status"] == "forgotten":
            return _not_run(run["id"], stage, "run forgotten"), False
        uow.runs.finish_stage(run["id"], stage.name, "failed", error=message, usage=used)
        if stage.optional:  # returning (not raising) lets the chain go on to the next stage
            _complete_if_done(uow, run["id"])
            return {"run_id": str(run["id"]), "stage": stage.name, "status": "failed", "error": message}, False
        uow.runs.finish_run(run["id"], "failed", error=f"{stage.name}: {message}")
        return {}, True

    def defer(self, uow, run, stage, used) -> None:
        raise NotImplementedError(f"stage {stage.name} deferred, but its runs cannot continue as a canvas")

    def fenced_out(self, uow, run, stage, message, used) -> dict:
        raise NotImplementedError


def _not_run(run_id, stage: Stage, reason: str) -> dict:
    return {"run_id": str(run_id), "stage": stage.name, "status": "not_run", "reason": reason}


def _heartbeat(run_id: uuid.UUID, stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        try:
            with Store().unit_of_work() as uow:
                uow.runs.heartbeat(run_id)
        except Exception:  # a missed heartbeat only risks an early sweep, never data
            log.warning("heartbeat failed for run %s", run_id, exc_info=True)


def _complete_if_done(uow: UnitOfWork, run_id: uuid.UUID) -> None:
    # In a run that has not failed, a failed stage is an optional one: it does not hold the run open.
    stages = uow.runs.stages(run_id)
    if any(s["status"] not in ("completed", "skipped", "failed") for s in stages):
        return
    failed = [f"{s['stage']}: {s['error']}" for s in stages if s["status"] == "failed"]
    uow.runs.finish_run(run_id, "completed", error=("optional stage failed: " + "; ".join(failed)) if failed else None)


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

    def open(self, uow: UnitOfWork, run_id: uuid.UUID, stage: Stage, settings: Settings) -> dict:
        run = uow.improve.run(run_id, lock=True)
        if run is None:
            raise InvalidPayload(f"improve run {run_id} does not exist")
        rows = {r["stage"]: r for r in uow.improve.stages(run_id)}
        if stage.name not in rows:
            raise InvalidPayload(f"improve run {run_id} has no stage {stage.name!r}")
        if rows[stage.name]["status"] in IMPROVE_DONE:
            raise Stop({"run_id": str(run_id), "stage": stage.name, "status": rows[stage.name]["status"],
                        "redelivered": True})
        return dict(run, stage_rows=rows, claim=uow.improve.claim(run["claim_id"]))

    def decide(self, uow, run: dict, stage: Stage, settings: Settings) -> tuple[str, str] | None:
        from engram.pipelines.improve import registry

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
        uow.improve.start_stage(run["id"], stage.name)

    @contextlib.contextmanager
    def lease(self, run: dict, settings: Settings) -> Iterator[None]:
        """The claim's lease, renewed while the stage works (its row records each renewal)."""
        from engram.adapters.claims import Claims, keep_alive
        from engram.adapters.redis_client import get_redis
        from engram.adapters.store.improve import FencedOut

        claims = Claims(get_redis())
        claim = claim_of(run["claim"], settings.lock_lease_seconds)
        if not claims.renew(claim):
            raise FencedOut("the claim's lease expired before the stage started")
        renewed(run["claim"]["id"])
        with keep_alive(claims, claim, on_renew=lambda: renewed(run["claim"]["id"])):
            yield

    def guard(self, uow: UnitOfWork, run: dict, stage: Stage) -> None:
        """First in the write transaction: the claim's fencing number (FencedOut if it was taken over)."""
        from engram.adapters.store.improve import fence_scopes

        uow.improve.check_fence(fence_scopes(run["dataset_id"], run["session_ids"]), run["fence"])

    def finish(self, uow: UnitOfWork, run: dict, stage: Stage, status: str, *, output: Any = None,
               reason: str | None = None, used: dict | None = None, error: str | None = None) -> dict:
        used = used or {}
        uow.improve.finish_stage(run["id"], stage.name, status, reason=reason, error=error,
                                 counts=output if isinstance(output, dict) else {}, usage=used)
        return {"run_id": str(run["id"]), "stage": stage.name, "status": status, "reason": reason, "error": error,
                "llm_calls": used.get("calls", 0),  # shown in Flower
                "tokens": used.get("prompt_tokens", 0) + used.get("completion_tokens", 0)}

    def retrying(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> None:
        uow.improve.finish_stage(run["id"], stage.name, "pending", error=f"retrying: {message}", usage=used)

    def fail(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> tuple[dict, bool]:
        return self.finish(uow, run, stage, "failed", used=used, error=message), False

    def defer(self, uow: UnitOfWork, run: dict, stage: Stage, used: dict) -> None:
        uow.improve.finish_stage(run["id"], stage.name, "running", usage=used)

    def fenced_out(self, uow: UnitOfWork, run: dict, stage: Stage, message: str, used: dict) -> dict:
        result = self.finish(uow, run, stage, "fenced_out", reason="claim_lost", used=used, error=message)
        uow.improve.finish_run(run["id"], "lost", error=message)
        uow.improve.close_claim(run["claim_id"], "lost", note=message)
        return result


def claim_of(row: dict, lease_seconds: float):
    from engram.adapters.claims import Claim

    return Claim(keys=tuple(row["claim_keys"]), value=row["claim_value"], fence=row["fence"],
                 lease_ms=max(1, int(lease_seconds * 1000)))


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
BOOKS: dict[str, Any] = {"pipeline": PipelineRuns(), "improve": IMPROVE_RUNS}


def improve_context(run_id: uuid.UUID) -> Context:
    """The context of an improve run's stage outside its task (the last step of a deferred canvas)."""
    with Store().unit_of_work() as uow:
        run = uow.improve.run(run_id)
    settings = get_settings()
    return Context(run, settings, IMPROVE_RUNS.ports(run, settings))


def finish_deferred(run_id: uuid.UUID, stage: Stage, status: str, reason, error, counts: dict, used: dict) -> dict:
    """The end of an improve stage that went on as a canvas (the improve chain continues after this)."""
    with Store().unit_of_work() as uow:
        run = uow.improve.run(run_id)
        if status == "fenced_out":
            return IMPROVE_RUNS.fenced_out(uow, run, stage, error, used)
        result = IMPROVE_RUNS.finish(uow, run, stage, status, output=counts, reason=reason, used=used, error=error)
    return result


# ------------------------------------------------------------------ the runner


def run_stage(task: Task, stage: Stage, run_id: uuid.UUID, book: Any = None) -> dict:
    """Execute one declared stage of one run (see the module doc for the transitions)."""
    book = book or BOOKS["pipeline"]
    store = Store()
    settings = get_settings()
    try:
        with store.unit_of_work() as uow:
            run = book.open(uow, run_id, stage, settings)
            ctx = Context(run, settings, book.ports(run, settings), stage)
            decision = book.decide(uow, run, stage, settings)
            if decision is None and stage.gate is not None:
                decision = stage.gate(uow, ctx)
            if decision is not None:
                return book.finish(uow, run, stage, decision[0], reason=decision[1])
            book.start(uow, run, stage)
    except Stop as stop:
        return stop.result

    with usage.usage_scope() as used:
        try:
            with book.lease(run, settings):
                result = _work(store, book, stage, ctx, used)
        except Stop as stop:
            return stop.result
        except _Deferring as deferring:
            deferred = deferring.deferred
        except Exception as exc:
            return _failed(task, store, book, run, stage, exc, used.as_dict())
        else:
            _run_after_commit(ctx, stage)
            return result
    # The stage goes on as a canvas; its last task records the stage's end (Ignore: not a failure).
    from engram.celery_app import app

    with store.unit_of_work() as uow:
        book.defer(uow, run, stage, used.as_dict())
    raise task.replace(app.signature(deferred.task, kwargs=deferred.kwargs))


def _run_after_commit(ctx: Context, stage: Stage) -> None:
    """The committed stage stands whatever its hooks do: a hook (an optimisation such as waking
    the embed queue) that fails is logged, and the task still returns, so Celery sends the
    chain's next link. Raising here would leave the run between stages with nothing queued."""
    for hook in ctx._after:
        try:
            hook()
        except Exception:  # noqa: BLE001 - see the docstring
            log.warning("after-commit hook %s of stage %s (run %s) failed; the stage stands",
                        getattr(hook, "__qualname__", hook), stage.name, ctx.run["id"], exc_info=True)


class _Deferring(Exception):
    def __init__(self, deferred: Deferred):
        super().__init__(deferred.task)
        self.deferred = deferred


def _work(store: Store, book: Any, stage: Stage, ctx: Context, used) -> dict:
    """load → compute → persist, each failure propagating to the one failure path."""
    with store.unit_of_work() as uow:
        inputs = stage.load(uow, ctx) if stage.load is not None else None
    try:
        result = contextvars.copy_context().run(stage.compute, inputs, ctx)
        status, reason = "completed", None
    except StageSkipped as skip:
        result, status, reason = None, "skipped", skip.reason
    if isinstance(result, Deferred):
        raise _Deferring(result)
    with store.unit_of_work() as uow:
        book.guard(uow, ctx.run, stage)
        output = result
        if stage.persist is not None and status == "completed":
            output = stage.persist(uow, ctx, inputs, result)
        return book.finish(uow, ctx.run, stage, status, output=output, reason=reason, used=used.as_dict())


def _failed(task: Task, store: Store, book: Any, run: dict, stage: Stage, exc: Exception, used: dict) -> dict:
    from engram.adapters.store.improve import FencedOut

    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, FencedOut):
        with store.unit_of_work() as uow:
            return book.fenced_out(uow, run, stage, str(exc), used)
    retries = task.request.retries or 0
    if stage.retry_transient and is_transient(exc) and retries < task.max_retries:
        with store.unit_of_work() as uow:
            book.retrying(uow, run, stage, message, used)
        raise task.retry(exc=exc, countdown=backoff_seconds(retries))
    log.warning("stage %s of run %s failed: %s\n%s", stage.name, run["id"], message,
                "".join(traceback.format_exception(exc)))
    with store.unit_of_work() as uow:
        result, reraise = book.fail(uow, run, stage, message, used)
    if reraise:
        raise exc
    return result


# ------------------------------------------------------------------ derived: tasks, routes, chains


STAGES: dict[str, Stage] = all_stages(FLOWS)


def _register(stage: Stage, book: Any):
    def body(self, req: StageRequest) -> dict:
        return run_stage(self, stage, req.run_id, book)

    body.__name__ = body.__qualname__ = f"{stage.namespace}_{stage.name}"
    return engram_task(stage.task, payload=StageRequest, max_retries=get_settings().task_max_retries)(body)


def _book_of(task: str):
    return BOOKS[next(flow.runs for flow in FLOWS if any(s.task == task for s in flow.tasks()))]


TASKS = {name: _register(stage, _book_of(name)) for name, stage in STAGES.items()}


def run_chain(flow: Flow, run_id: uuid.UUID, stages: list[str]):
    from engram.celery_app import app

    return chain(*(app.signature(flow.stage(s).task, kwargs={"run_id": str(run_id)}, immutable=True)
                   for s in stages))


def start_runs(runs: list[tuple[uuid.UUID, list[str]]], flow: Flow | str = "cognify") -> None:
    """One chain per run (enqueue only after the runs' rows are committed); several runs of a
    cognify accept form a group with a completion callback."""
    from engram.celery_app import app

    flow = flow_named(flow) if isinstance(flow, str) else flow
    runs = [(r, s) for r, s in runs if s]
    if not runs:
        return
    if len(runs) == 1:
        run_chain(flow, *runs[0]).apply_async()
        return
    callback = app.signature("engram.cognify.finish_dataset", kwargs={"run_ids": [str(r) for r, _ in runs]},
                             immutable=True)
    chord(group(run_chain(flow, r, s) for r, s in runs))(callback)


def cognify_inline(run_id: uuid.UUID, stages: list[str]) -> None:
    """Run a cognify run's stages in this process, in order (the same task code as the chain)."""
    from engram.celery_app import app

    flow = flow_named("cognify")
    for stage in stages:
        out = app.tasks[flow.stage(stage).task](run_id=str(run_id))
        if isinstance(out, dict) and out.get("status") in ("not_run", "failed"):
            raise RuntimeError(f"cognify run {run_id} stage {stage}: {out.get('reason') or out.get('error')}")
