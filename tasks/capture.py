"""engram.capture and engram.capture.reprocess: the producer side of the capture flow.

The producer task admits the object first (committed, never rolled back), then enqueues the
rest of the flow declared in pipelines/capture/flow.py (run by tasks/engine.py). Every stage is
optional: a failure is recorded on its stage and the chain goes on; the capture is "partial"
when any stage failed, else "complete".
"""

from __future__ import annotations

import uuid

from engram.adapters.store import Store
from engram.models.payloads import CaptureAccepted, CaptureReprocessed, CaptureReprocessRequest, CaptureRequest
from engram.pipelines.capture.flow import CAPTURE, open_run, to_reprocess
from engram.pipelines.errors import BadInput
from engram.pipelines.intake import writable_dataset
from engram.tasks.base import engram_task
from engram.tasks.engine import start_runs


@engram_task("engram.capture", payload=CaptureRequest)
def capture(self, req: CaptureRequest) -> dict:
    """Admit the object (and its request) in one transaction, then enqueue its stages."""
    draft = req.draft()
    stages: list[str] = []
    run_id = None
    with Store().unit_of_work() as uow:
        dataset = writable_dataset(uow, req.dataset, req.user, req.create_dataset)
        object_id, created = uow.capture.admit(dataset, draft, captured_by=req.captured_by or "task")
        if not created:
            existing = uow.capture.get(object_id)
            return CaptureAccepted(status="accepted", dataset=req.dataset, object_id=object_id,
                                   type=existing["obj_type"], run_id=existing["run_id"],
                                   duplicate=True).model_dump(mode="json")
        if req.run_pipeline:
            run_id = uuid.uuid4()
            stages = open_run(uow, run_id, dataset, object_id)
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
            stages = open_run(uow, run_id, dataset, obj["id"])
        else:
            stages = to_reprocess(uow.runs.stages(run_id))
            uow.runs.reopen_from(run_id, stages)
    start(run_id, stages)
    return CaptureReprocessed(object_id=req.object_id, run_id=run_id, stages=stages).model_dump(mode="json")


def start(run_id: uuid.UUID | None, stages: list[str]) -> None:
    if run_id is not None:
        start_runs([(run_id, stages)], CAPTURE)
