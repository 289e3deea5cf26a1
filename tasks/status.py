"""Run status for producers: per-stage progress of a run or of a dataset's runs."""

from __future__ import annotations

from kombu.exceptions import ChannelError

from engram.adapters.store import Store
from engram.adapters.store.access import require_run
from engram.models.payloads import RunStatus, StageStatus, StatusRequest, StatusResult
from engram.settings import get_settings


def _run(uow, run: dict) -> RunStatus:
    return RunStatus(
        run_id=run["id"], pipeline=run["pipeline"], status=run["status"], error=run["error"],
        data_item_id=run["data_item_id"], attempts=run["attempts"], llm_calls=run["llm_calls"],
        tokens=run["tokens"], created_at=run["created_at"], finished_at=run["finished_at"],
        stages=[StageStatus(**{k: s[k] for k in StageStatus.model_fields}) for s in uow.runs.stages(run["id"])],
    )


def run_status(req: StatusRequest, app=None) -> StatusResult:
    """`app`: the Celery app whose broker holds the queues (default: Engram's configured one)."""
    with Store().unit_of_work() as uow:
        if req.run_id is not None:
            run = uow.runs.get(req.run_id)
            require_run(uow, run, req.run_id, req.user, "read")  # a run id is not a capability
            return StatusResult(runs=[_run(uow, run)])
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        runs = [_run(uow, r) for r in uow.runs.for_dataset(dataset, req.limit)]
    return StatusResult(runs=runs, queues=queue_depths(app))


def queue_depths(app=None) -> dict[str, int]:
    """Messages waiting in each Engram queue (not those a worker holds), through the broker itself."""
    if app is None:
        from engram.celery_app import app
    depths = {}
    with app.connection_for_read() as conn:
        for name in get_settings().queues:
            channel = conn.channel()  # a failed passive declare may close an AMQP channel
            try:
                depths[name] = channel.queue_declare(name, passive=True).message_count
            except ChannelError:  # never declared: nothing ever waited there
                depths[name] = 0
            finally:
                channel.close()
    return depths
