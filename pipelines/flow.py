"""Stages and flows as data: the one place a stage is declared. Pure: no Celery, no drivers.

A Stage names its work once: its queue, how it loads its inputs from a unit of work, the pure
compute, how it persists, its failure policy, its gate and whether the run's budget applies.
A Flow is an ordered list of stages (cognify, the graph passes, capture, improve). The runner
(tasks/engine.py) executes any declared stage; Celery task names, routes, chains and the
stage lists of new runs are derived from these declarations.

Stage functions take a context `ctx` (the run row and its ids, settings, ports):
    gate(uow, ctx) -> (status, reason) | None      None: run the stage
    load(uow, ctx) -> inputs                       in the stage's opening transaction
    compute(inputs, ctx) -> result                 outside any transaction (LLM, embedding)
    publish(uow, ctx, inputs, result) -> Published  documents the stage publishes, in a write
                                                    transaction of their own; the runner cognifies
                                                    the runs it started here, then persists
    persist(uow, ctx, inputs, result) -> output    in the write transaction (fenced for improve);
                                                    a Verdict gives the stage an end of its own
compute only computes: what it returns is written by publish / persist. It may raise
StageSkipped (nothing to do) or return Deferred (the stage goes on as a Celery canvas whose
last task ends it through the runner, with persist).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

FATAL = "fatal"  # its failure fails the run (cognify) or aborts its later stages (improve)
OPTIONAL = "optional"  # its failure is recorded on the stage alone; the run goes on


class StageSkipped(Exception):
    """Raised by a stage's compute that decides it has nothing to do (recorded as skipped)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Deferred:
    """The stage continues in `task` (kwargs); the canvas's last task records its end."""

    task: str
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Published:
    """What a stage's publish stored: the cognify runs it started (the engine runs them in this
    process, in order, before persist: their LLM use is the stage's) and the result persist gets."""

    runs: tuple[tuple[Any, list[str]], ...]
    result: Any


@dataclass(frozen=True)
class Verdict:
    """A persist's output with an end of its own (an improve stage): completed with a reason, or
    failed with its error while what it wrote stands."""

    output: Any
    status: str = "completed"
    reason: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Stage:
    name: str
    queue: str  # logical queue: ingest | llm | embed | maintenance (settings map it to a real one)
    namespace: str  # the Celery task is engram.<namespace>.<name>
    compute: Callable[[Any, Any], Any] | None = None  # None: recorded when the run is accepted (no task)
    load: Callable[[Any, Any], Any] | None = None
    persist: Callable[[Any, Any, Any, Any], Any] | None = None
    publish: Callable[[Any, Any, Any, Any], Published] | None = None
    gate: Callable[[Any, Any], tuple[str, str] | None] | None = None
    failure: str = FATAL
    retry_transient: bool = True  # transient errors (LLM, database, broker) are retried with backoff
    uses_budget: bool = False  # an exhausted run budget skips it
    include: Callable[[dict], bool] | None = None  # in a new run only when this holds for its options

    @property
    def task(self) -> str:
        return f"engram.{self.namespace}.{self.name}"

    @property
    def fatal(self) -> bool:
        return self.failure == FATAL

    @property
    def optional(self) -> bool:
        return self.failure == OPTIONAL

    @property
    def accepted(self) -> bool:
        """Recorded by the accepting task itself (remember's add, capture's admit): no task runs it."""
        return self.compute is None


@dataclass(frozen=True)
class Flow:
    name: str  # the runs' `pipeline`
    stages: tuple[Stage, ...]
    runs: str = "pipeline"  # the bookkeeping its runs live in (tasks/engine.py BOOKS)
    # A run whose optional stage failed ends "partial" (what it admitted is stored; a reprocess
    # may complete it) instead of "completed" with the failure as its note.
    partial: bool = False

    def __post_init__(self):
        names = [s.name for s in self.stages]
        if len(names) != len(set(names)):
            raise ValueError(f"flow {self.name}: a stage is declared twice")

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"flow {self.name} has no stage {name!r}")

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stages_for(self, options: dict | None = None) -> list[str]:
        """The stage list of a new run with these options, in order."""
        options = options or {}
        return [s.name for s in self.stages if s.include is None or s.include(options)]

    def tasks(self) -> list[Stage]:
        """The stages a Celery task runs."""
        return [s for s in self.stages if not s.accepted]


def all_stages(flows: Iterable[Flow]) -> dict[str, Stage]:
    """Every stage of these flows by task name (a stage shared by two flows appears once)."""
    out: dict[str, Stage] = {}
    for flow in flows:
        for s in flow.tasks():
            if out.setdefault(s.task, s) is not s:
                raise ValueError(f"two stages declare task {s.task}")
    return out


def run_inline(stage: Stage, unit_of_work: Callable[[], Any], ctx: Any) -> Any:
    """A stage as a use case over any unit of work (an in-memory fake in unit tests): gate and
    load in one unit of work, compute, publish in another (then cognify what it started), persist
    in another. No retries, leases or bookkeeping:
    those are the runner's (tasks/engine.py)."""
    with unit_of_work() as uow:
        decision = stage.gate(uow, ctx) if stage.gate is not None else None
        if decision is not None:
            return decision
        inputs = stage.load(uow, ctx) if stage.load is not None else None
    result = stage.compute(inputs, ctx)
    if stage.publish is not None:
        with unit_of_work() as uow:
            published = stage.publish(uow, ctx, inputs, result)
        for run_id, stages in published.runs:
            ctx.ports.cognify(run_id, stages)
        result = published.result
    if stage.persist is None:
        return result
    with unit_of_work() as uow:
        return stage.persist(uow, ctx, inputs, result)
