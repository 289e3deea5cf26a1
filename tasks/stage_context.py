"""What a stage sees (tasks/engine.py runs it): its ports (the LLM, the embedder, the store,
documents it adds) and its context (the run, the settings, after-commit hooks)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from engram.adapters.store import Store
from engram.pipelines.flow import Stage
from engram.settings import Settings
from engram.adapters.embed import get_embedder
from engram.adapters.llm.gateway import gateway_from_settings
from engram.pipelines.cognify.embedding import VectorsPending, vectors_for
from engram.pipelines.intake import Intake, admit


class Ports:
    """What stage functions reach outside their unit of work: the LLM, the embedder, the store."""

    def __init__(self, settings: Settings, dataset_id: uuid.UUID | None = None,
                 write: Callable[[], Any] | None = None):
        self.settings, self.dataset_id = settings, dataset_id
        self._write = write

    def llm(self):
        return gateway_from_settings(self.settings)

    def embedder(self):
        return get_embedder(self.settings)

    def read(self):
        return Store().unit_of_work()

    def write(self):
        """A unit of work for the stage's own writes (fenced for an improve run)."""
        return self._write() if self._write is not None else Store().unit_of_work()

    def vectors_for(self, texts: list[str], item_id: uuid.UUID, give_way: bool = False):
        """One vector per text from the fleet's shared embedding batches (stored ones reused);
        `give_way`: VectorsPending rather than an idle wait on other batches when other work waits
        in this worker's queues (the engine re-sends the stage)."""
        from engram.tasks.embedding import count_embedded, embed_policy, work_waiting

        embedder = self.embedder()
        try:
            vectors, stats = vectors_for(texts, item_id, store=Store(), embedder=embedder,
                                         policy=embed_policy(self.settings),
                                         give_way=(lambda: work_waiting(self.settings)) if give_way else None)
        except VectorsPending as pending:  # the batches it ran before giving way count too
            count_embedded(embedder.name, pending.stats.embedded)
            raise
        count_embedded(embedder.name, stats.embedded, reused=stats.reused)
        return vectors, stats

    def schedule_embedding(self) -> None:
        from engram.tasks.embedding import schedule_batch

        schedule_batch()

    def cognify(self, run_id: uuid.UUID, stages: list[str]) -> None:
        """Run a cognify run's stages in this process, in order (the same stage tasks as the chain)."""
        from engram.tasks.engine import cognify_inline

        cognify_inline(run_id, stages)

    def start_cognify(self, runs: list[tuple[uuid.UUID, list[str]]]) -> None:
        """Enqueue cognify runs' chains (after the commit that recorded them)."""
        from engram.tasks.engine import start_runs

        start_runs(runs)

    def add_document(self, uow, item, *, source: str, node_sets: list[str]) -> tuple[uuid.UUID, uuid.UUID, list[str]]:
        """Store a document a stage wrote: (item id, its cognify run id, the stages the stage
        starts now), decided by the intake rule (pipelines/intake.py)."""
        # Improve stages start their documents' runs themselves: a pending one was left by an earlier attempt.
        (admitted,) = admit(uow, Intake(self.dataset_id, [replace(item, source=source)], redelivered=True,
                                        node_sets=node_sets)).items
        return admitted.data_item_id, admitted.run_id, list(admitted.stages)


class Context:
    """The run a stage works for (its row and ids), the stage, settings, ports, after-commit hooks."""

    def __init__(self, run: dict, settings: Settings, ports: Ports, stage: Stage | None = None):
        self.run, self.settings, self.ports, self.stage = run, settings, ports, stage
        self.give_way = False  # may the stage give its worker back while other batches embed its texts
        self._after: list[Callable[[], None]] = []

    run_id = property(lambda self: self.run["id"])
    dataset_id = property(lambda self: self.run["dataset_id"])
    session_ids = property(lambda self: list(self.run.get("session_ids") or []))
    snapshot = property(lambda self: self.run.get("snapshot") or {})

    def after_commit(self, hook: Callable[[], None]) -> None:
        self._after.append(hook)

    def after_commit_hooks(self) -> tuple[Callable[[], None], ...]:
        """The hooks to run once the stage's writes are committed, in the order they were added."""
        return tuple(self._after)
