"""Run status for producers: per-stage progress of a run or of a dataset's runs."""

from __future__ import annotations

import re
import uuid

from engram.adapters import broker
from engram.adapters.store import Store
from engram.adapters.store.access import UnknownDataset, require_run
from engram.models.payloads import RunStatus, StageStatus, StatusRequest, StatusResult
from engram.pipelines import ids
from engram.pipelines.errors import BadInput
from engram.settings import get_settings


def _runs(uow, runs: list[dict]) -> list[RunStatus]:
    stages = uow.runs.stage_statuses([r["id"] for r in runs])
    return [RunStatus(
        run_id=run["id"], pipeline=run["pipeline"], status=run["status"], error=run["error"],
        data_item_id=run["data_item_id"], attempts=run["attempts"], llm_calls=run["llm_calls"],
        tokens=run["tokens"], created_at=run["created_at"], finished_at=run["finished_at"],
        stages=[StageStatus(**{k: s[k] for k in StageStatus.model_fields}) for s in stages[run["id"]]],
    ) for run in runs]


def status_result(req: StatusRequest, app=None) -> StatusResult:
    """`app`: the Celery app whose broker holds the queues (default: Engram's configured one)."""
    with Store().unit_of_work() as uow:
        if req.run_id is not None:
            run = uow.runs.get(req.run_id)
            require_run(uow, run, req.run_id, req.user, "read")  # a run id is not a capability
            return StatusResult(runs=_runs(uow, [run]))
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        runs = _runs(uow, uow.runs.for_dataset(dataset, req.limit))
    return StatusResult(runs=runs, queues=queue_depths(app))


def queue_depths(app=None) -> dict[str, int]:
    """Messages waiting in each Engram queue (not those a worker holds), through the broker itself."""
    if app is None:
        from engram.celery_app import app
    return broker.queue_depths(app, get_settings().queues)


# ------------------------------------------------------------------ local reads for the CLI
# The CLI shows ids shortened; these turn what a user types back into full ids, only among
# what the user may read (another user's run is as unknown as a missing one).

_HEX = re.compile(r"^[0-9a-f-]{1,36}$")


def find_run(ref: str, user: str) -> uuid.UUID:
    """The run whose id is `ref` or starts with it, among the runs `user` may read."""
    ref = ref.strip().lower()
    if not _HEX.match(ref):
        raise BadInput(f"{ref!r} is not a run id (hex digits, as `engram status` shows them)")
    with Store().unit_of_work() as uow:
        found = uow.runs.ids_starting(ref, ids.user_id(user))
    if not found:
        raise UnknownDataset(f"no run {'is' if len(ref) == 36 else 'starts with'} {ref!r} for user {user!r}")
    if len(found) > 1:
        raise BadInput(f"run id {ref!r} is the start of more than one run: give more of it")
    return found[0]


def find_items(dataset: str, user: str, *, item: str | None = None, document: str | None = None) -> list[dict]:
    """The dataset's items with id `item` (or an id starting with it), or named `document`."""
    with Store().unit_of_work() as uow:
        did = uow.access.authorise(dataset, user, "read")
        if item is not None:
            ref = item.strip().lower()
            if not _HEX.match(ref):
                raise BadInput(f"{item!r} is not an item id (hex digits)")
            return uow.graph.find_items(did, id_prefix=ref, limit=2)
        return uow.graph.find_items(did, name=document)
