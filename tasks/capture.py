"""engram.capture and engram.capture.reprocess, and the capture flow's stage tasks.

The producer task admits the object first (committed, never rolled back), then enqueues
normalize → link → enrich → reason, one Celery task per stage declared in
pipelines/capture/flow.py. Every stage is optional: a failure is recorded on its stage and
the chain goes on; the capture is "partial" when any stage failed, else "complete".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from celery import chain

from engram.adapters.embed import get_embedder
from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.store import Store
from engram.models.payloads import CaptureAccepted, CaptureReprocessRequest, CaptureRequest
from engram.pipelines.capture.flow import DECLARED, STAGES
from engram.pipelines.errors import BadInput
from engram.settings import get_settings
from engram.tasks.base import engram_task, execute_stage
from engram.tasks.cognify import StageRequest

STAGE_TASKS = {name: f"engram.capture.{name}" for name, *_ in DECLARED}
QUEUES = {f"engram.capture.{name}": queue for name, queue, *_ in DECLARED}


@engram_task("engram.capture", payload=CaptureRequest)
def capture(self, req: CaptureRequest) -> dict:
    """Admit the object (and its request) in one transaction, then enqueue its stages."""
    draft = req.draft()
    stages: list[str] = []
    run_id = None
    with Store().unit_of_work() as uow:
        if req.create_dataset and uow.access.find_own(req.dataset, req.user) is None:
            uow.access.create_dataset(req.user, req.dataset)
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        object_id, created = uow.capture.admit(dataset, draft, captured_by=req.captured_by or "task")
        if not created:
            existing = uow.capture.get(object_id)
            return CaptureAccepted(status="accepted", dataset=req.dataset, object_id=object_id,
                                   type=existing["obj_type"], run_id=existing["run_id"],
                                   duplicate=True).model_dump(mode="json")
        if req.run_pipeline:
            run_id = uuid.uuid4()
            uow.runs.create(run_id, "capture", list(STAGES), dataset, object_id)
            uow.runs.finish_stage(run_id, "admit", "completed", output={"object_id": str(object_id)})
            uow.capture.set_run(object_id, run_id)
            stages = list(STAGES[1:])
    start(run_id, stages)  # only after the commit: the stages read the admitted rows
    return CaptureAccepted(status="accepted", dataset=req.dataset, object_id=object_id, type=draft.type,
                           run_id=run_id, stages=stages).model_dump(mode="json")


@engram_task("engram.capture.reprocess", payload=CaptureReprocessRequest)
def reprocess(self, req: CaptureReprocessRequest) -> dict:
    """Resume at the first failed stage (it and every later one rerun); with nothing failed,
    rerun every stage. Inputs are the persisted request: the caller's entities, properties..."""
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        obj = uow.capture.get(req.object_id)
        if obj is None or obj["dataset_id"] != dataset:
            raise BadInput(f"captured object {req.object_id} is not in dataset {req.dataset!r}")
        run_id = obj["run_id"]
        if run_id is None or uow.runs.lock(run_id) is None:  # admitted with run_pipeline=False
            run_id = uuid.uuid4()
            uow.runs.create(run_id, "capture", list(STAGES), dataset, obj["id"])
            uow.runs.finish_stage(run_id, "admit", "completed", output={"object_id": str(obj["id"])})
            uow.capture.set_run(obj["id"], run_id)
            stages = list(STAGES[1:])
        else:
            rows = [s for s in uow.runs.stages(run_id) if s["stage"] != "admit"]
            failed = [i for i, s in enumerate(rows) if s["status"] == "failed"]
            stages = [s["stage"] for s in rows[failed[0] if failed else 0:]]
            uow.capture.reset_stages(run_id, stages)
    start(run_id, stages)
    return {"object_id": str(req.object_id), "run_id": str(run_id), "status": "pending", "stages": stages}


def start(run_id: uuid.UUID | None, stages: list[str]) -> None:
    from engram.celery_app import app

    if run_id is None or not stages:
        return
    chain(*(app.signature(STAGE_TASKS[s], kwargs={"run_id": str(run_id)}, immutable=True) for s in stages)
          ).apply_async()


# ------------------------------------------------------------------ stage tasks


class _Ports:
    def __init__(self, settings):
        self.settings = settings

    def llm(self):
        return gateway_from_settings(self.settings)

    def embedder(self):
        return get_embedder(self.settings)


@dataclass
class _Context:
    run: dict
    settings: Any
    ports: Any


def _stage_task(name: str, load, compute, persist):
    def body(self, req: StageRequest) -> dict:
        settings = get_settings()
        ctx = _Context(run={}, settings=settings, ports=_Ports(settings))

        def loaded(uow):
            ctx.run = uow.runs.get(req.run_id)
            return load(uow, ctx)

        return execute_stage(self, req.run_id, name, load=loaded, compute=lambda inputs: compute(inputs, ctx),
                             persist=lambda uow, inputs, out: persist(uow, ctx, inputs, out), optional=True)

    body.__name__ = body.__qualname__ = f"capture_{name}"
    return engram_task(STAGE_TASKS[name], payload=StageRequest, max_retries=get_settings().task_max_retries)(body)


for _name, _queue, _load, _compute, _persist in DECLARED:
    globals()[f"capture_{_name}"] = _stage_task(_name, _load, _compute, _persist)
