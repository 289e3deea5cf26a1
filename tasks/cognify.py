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
    RunRef,
    StatusRequest,
)
from engram.pipelines.backpressure import RATE_WINDOW_SECONDS, backlog
from engram.pipelines.cognify.flow import extract_one, run_row  # noqa: F401 - extract_one: tests/faults
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.tasks.engine import start_runs
from engram.tasks.status import run_status


# ------------------------------------------------------------------ producer-facing tasks


@engram_task("engram.remember", payload=RememberRequest)
def remember(self, req: RememberRequest) -> dict:
    """Add every item (dedupe by content hash), create its run, commit, then enqueue cognify."""
    if req.session_id is not None:  # a session turn: stored at once, improved separately (SPEC 6)
        from engram.tasks.sessions import store_session_entry

        return store_session_entry(req, self.request.id)
    settings = get_settings()
    prepared = [prepare(item, settings.max_content_bytes, i) for i, item in enumerate(req.items)]
    store = Store()
    refs: list[RunRef] = []
    to_start: list[tuple[uuid.UUID, list[str]]] = []
    with store.unit_of_work() as uow:
        if req.create_dataset and uow.access.find_own(req.dataset, req.user) is None:
            uow.access.create_dataset(req.user, req.dataset)
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        ahead = uow.runs.open_count()
        options = req.options.model_dump(exclude_none=True)
        added = uow.graph.add_items(
            dataset, [{"digest": i.digest, "content": i.text, "name": i.name, "mime": i.mime, "source": i.source}
                      for i in prepared], node_sets=req.node_sets, importance=req.importance)
        new_runs: list[dict] = []
        started_here: dict[uuid.UUID, uuid.UUID] = {}  # item -> the run this call created for it
        for item, (item_id, created) in zip(prepared, added):
            if not created:
                if item_id in started_here:  # the same content twice in one call: one run
                    refs.append(RunRef(run_id=started_here[item_id], data_item_id=item_id, name=item.name,
                                       duplicate=True, status="pending"))
                    continue
                previous = uow.runs.latest_for_item(item_id)
                if previous is not None and previous["status"] == "pending" and self.request.retries:
                    # This remember is a retry: its first attempt may have committed the run and
                    # then failed to enqueue it. Enqueue again (stages are idempotent).
                    to_start.append((previous["id"], [s["stage"] for s in uow.runs.stages(previous["id"])
                                                      if s["status"] == "pending"]))
                if previous is not None and previous["status"] != "failed":
                    refs.append(RunRef(run_id=previous["id"], data_item_id=item_id, name=item.name,
                                       duplicate=True, status=previous["status"]))
                    continue
                if previous is not None:  # the same content again after a failure: retry that run
                    to_start.append((previous["id"], uow.runs.reopen(previous["id"])))
                    refs.append(RunRef(run_id=previous["id"], data_item_id=item_id, name=item.name,
                                       duplicate=True, status="pending"))
                    continue
            run_id = uuid.uuid4()
            new_run = run_row(run_id, dataset, item_id, options=options, duplicate=not created,
                              params={"doc_type": item.doc_type, "name": item.name})
            new_runs.append(new_run)
            started_here[item_id] = run_id
            to_start.append((run_id, new_run["stages"][1:]))
            refs.append(RunRef(run_id=run_id, data_item_id=item_id, name=item.name, status="pending"))
        uow.runs.create_many(new_runs)
        bound = settings.accept_backlog_bound
        pressure = backlog(ahead, uow.runs.finished_since(RATE_WINDOW_SECONDS) if ahead > bound else 0,
                           len(to_start), bound)
    # Enqueue only after the rows are committed.
    enqueue_runs(to_start)
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
            return {"run_id": str(req.run_id), "status": "completed", "stages": []}
        # A completed run may still hold a failed optional pass (contradictions, supersession).
        stages = uow.runs.reopen(req.run_id)
    start_runs([(req.run_id, stages)])
    return {"run_id": str(req.run_id), "status": "pending", "stages": stages}


@engram_task("engram.status", payload=StatusRequest)
def status(self, req: StatusRequest) -> dict:
    return run_status(req).model_dump(mode="json")


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
        # Task results quoting what went (a recall's chunks, an accept's payload): before the
        # commit, so a Redis error rolls the forget back and its retry does both.
        purge_quoting(get_redis(), uow.forget.removed_texts)
    return ForgetResult(**counts).model_dump()


# ------------------------------------------------------------------ canvas


class StartRequest(BaseModel):
    runs: list[tuple[uuid.UUID, list[str]]]


def enqueue_runs(runs: list[tuple[uuid.UUID, list[str]]]) -> None:
    """An accept's enqueue: one chain is one message anyway; several go as one `start` message
    that a pipeline worker expands, so accepting a batch costs one publish, not one per item."""
    from engram.celery_app import app

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
