"""The producer requests of the graph passes (SPEC 7): a whole-dataset contradiction check or
temporal supersession. The passes themselves are declared in pipelines/maintenance/flow.py and
run by tasks/engine.py, inside cognify runs or as the one stage of a "maintenance" run.
"""

from __future__ import annotations

import uuid

from engram.adapters.store import Store
from engram.models.payloads import ContradictionCheckRequest, MaintenanceAccepted, SupersedeRequest
from engram.pipelines.maintenance.flow import (
    DATASET_SCOPE,
    MAINTENANCE,
    contradiction_options,
    supersession_options,
)
from engram.pipelines.maintenance.supersession import normalise_functional
from engram.tasks.base import engram_task
from engram.tasks.engine import start_runs


def _start_pass(dataset_name: str, user: str, options: dict) -> dict:
    """A one-stage maintenance run over the dataset, enqueued after its rows are committed."""
    run_id = uuid.uuid4()
    stages = MAINTENANCE.stages_for(options)
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(dataset_name, user, "write")
        uow.runs.open(run_id, MAINTENANCE.name, stages, dataset=dataset,
                      params={"options": options, "scope": DATASET_SCOPE})
    start_runs([(run_id, stages)], MAINTENANCE)
    return MaintenanceAccepted(status="accepted", dataset=dataset_name, stage=stages[0], run_id=run_id).model_dump(
        mode="json")


@engram_task("engram.maintenance.check_contradictions", payload=ContradictionCheckRequest)
def check_contradictions(self, req: ContradictionCheckRequest) -> dict:
    return _start_pass(req.dataset, req.user, contradiction_options())


@engram_task("engram.maintenance.supersede", payload=SupersedeRequest)
def supersede(self, req: SupersedeRequest) -> dict:
    normalise_functional(req.functional_relationships)  # a bad declaration fails here, before any run
    return _start_pass(req.dataset, req.user, supersession_options(req.functional_relationships))
