"""The producer side of cognify: remember (accept), retry, status, forget.

The stages themselves are declared in pipelines/cognify/flow.py and run by tasks/engine.py:
remember records each item's run with its first stage done and enqueues the rest as a chain.
"""

from __future__ import annotations

import uuid

from pydantic import BaseModel

from engram.adapters.embed import get_embedder
from engram.adapters.redis_client import get_redis
from engram.adapters.results import purge_quoting
from engram.adapters.store import Store
from engram.adapters.store.access import require_run
from engram.models.payloads import (
    ForgetRequest,
    ForgetResult,
    RememberRequest,
    RememberResult,
    RetryRequest,
    RetryResult,
    RunRef,
    StatusRequest,
)
from engram.pipelines.backpressure import RATE_WINDOW_SECONDS, backlog
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.pipelines.intake import Intake, admit, writable_dataset
from engram.settings import get_settings
from engram.tasks.base import engram_task, redelivered
from engram.tasks.engine import start_runs
from engram.tasks.status import status_result
from engram.celery_app import app


# ------------------------------------------------------------------ producer-facing tasks


@engram_task("engram.remember", payload=RememberRequest)
def remember(self, req: RememberRequest) -> dict:
    """Add every item (dedupe by content hash), create its run, commit, then enqueue cognify."""
    if req.session_id is not None:  # a session turn: stored at once, improved separately (SPEC 6)
        from engram.tasks.sessions import store_session_entry

        return store_session_entry(req, self.request.id)
    settings = get_settings()
    prepared = [prepare(item, settings.max_content_bytes, i) for i, item in enumerate(req.items)]
    with Store().unit_of_work() as uow:
        dataset = writable_dataset(uow, req.dataset, req.user, req.create_dataset)
        ahead = uow.runs.open_count()
        admission = admit(uow, Intake(dataset, prepared, redelivered=redelivered(self.request),
                                      options=req.options.model_dump(exclude_none=True),
                                      node_sets=req.node_sets, importance=req.importance))
        bound = settings.accept_backlog_bound
        pressure = backlog(ahead, uow.runs.finished_since(RATE_WINDOW_SECONDS) if ahead > bound else 0,
                           len(admission.to_start), bound)
    refs = [RunRef(run_id=a.run_id, data_item_id=a.data_item_id, name=a.name, duplicate=a.duplicate,
                   status=a.status) for a in admission.items]
    # Enqueue only after the rows are committed.
    enqueue_runs(admission.to_start)
    return RememberResult(status="accepted", dataset=req.dataset, runs=refs, **(pressure or {})).model_dump(mode="json")


@engram_task("engram.cognify", payload=RetryRequest)
def cognify(self, req: RetryRequest) -> dict:
    """Retry a run: completed stages stay completed; the chain starts at the first unfinished one."""
    with Store().unit_of_work() as uow:
        run = uow.runs.lock(req.run_id)
        require_run(uow, run, req.run_id, req.user, "write")
        if run["status"] == "forgotten":
            raise BadInput(f"run {req.run_id} was forgotten: remember the content again instead")
        failed_passes = [s for s in uow.runs.stages(req.run_id) if s["status"] == "failed"]
        if run["status"] == "completed" and not failed_passes:
            return RetryResult(run_id=req.run_id, status="completed").model_dump(mode="json")
        # A completed run may still hold a failed optional pass (contradictions, supersession).
        stages = uow.runs.reopen(req.run_id)
    start_runs([(req.run_id, stages)])
    return RetryResult(run_id=req.run_id, status="pending", stages=stages).model_dump(mode="json")


@engram_task("engram.status", payload=StatusRequest)
def status(self, req: StatusRequest) -> dict:
    return status_result(req).model_dump(mode="json")


@engram_task("engram.forget", payload=ForgetRequest)
def forget(self, req: ForgetRequest) -> dict:
    """Remove every copy of an item (or of the whole dataset); its runs become `forgotten` tombstones."""
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "delete")
        if req.data_item_id is not None:
            item = uow.graph.item(req.data_item_id)
            if item is None or item["dataset_id"] != dataset:
                raise BadInput(f"data item {req.data_item_id} is not in dataset {req.dataset!r}")
            counts, rewritten = uow.forget.forget_items([req.data_item_id])
        else:
            counts, rewritten = uow.forget.forget_dataset(dataset)
        if rewritten:  # a kept fact's vector embedded the forgotten description: embed what is left
            vectors = get_embedder(get_settings()).embed([t for _, t in rewritten])
            uow.forget.set_edge_embeddings({e: v for (e, _), v in zip(rewritten, vectors)})
        # Task results quoting what went (a recall's chunks, an accept's payload) or naming its
        # ids (a capture's object), and a forgotten dataset's every result: before the commit, so
        # a Redis error rolls the forget back and its retry does both.
        purge_quoting(get_redis(), uow.forget.removed_texts, ids=uow.forget.removed_ids,
                      datasets=[req.dataset, str(dataset)] if req.data_item_id is None else ())
    if req.data_item_id is None:  # the dataset's own vector indexes go with its rows (an item's: by the sweep)
        Store().vector_indexes().drop([dataset])
    return ForgetResult(**counts).model_dump()


# ------------------------------------------------------------------ canvas


class StartRequest(BaseModel):
    runs: list[tuple[uuid.UUID, list[str]]]


def enqueue_runs(runs: list[tuple[uuid.UUID, list[str]]]) -> None:
    """An accept's enqueue: one chain is one message anyway; several go as one `start` message
    that a pipeline worker expands, so accepting a batch costs one publish, not one per item."""
    runs = [(r, s) for r, s in runs if s]
    if len(runs) <= 1:
        start_runs(runs)
        return
    app.send_task("engram.cognify.start", kwargs={"runs": [[str(r), s] for r, s in runs]})


@engram_task("engram.cognify.start", payload=StartRequest)
def start(self, req: StartRequest) -> dict:
    """Enqueue the chains of runs an accept committed (signed by Engram: internal only)."""
    start_runs(req.runs)
    return {"runs": len(req.runs)}


@engram_task("engram.cognify.finish_dataset")
def finish_dataset(self, run_ids: list[str]) -> dict:
    with Store().unit_of_work() as uow:
        statuses = [uow.runs.get(uuid.UUID(r)) for r in run_ids]
    done = sum(1 for s in statuses if s and s["status"] == "completed")
    return {"runs": len(run_ids), "completed": done, "failed": len(run_ids) - done}
