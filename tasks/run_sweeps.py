"""The sweeps beat drives: resume or fail abandoned pipeline runs; build and drop the per-dataset
vector indexes.

Its Celery name stays engram.maintenance.sweep_runs (beat and running fleets use it); the
graph passes producers ask for (engram.maintenance.check_contradictions / supersede) live in
tasks/maintenance.py, improve's sweeps in tasks/improve_sweeps.py."""

from __future__ import annotations

import logging

from engram.adapters.store import Store
from engram.pipelines.flows import BY_NAME as FLOWS
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.tasks.engine import start_runs
from engram.tasks.status import queue_depths

log = logging.getLogger("engram.maintenance")


def _pipeline_backlog(settings) -> int:
    """Messages waiting in the pipeline queues (any if the broker cannot say: assume a backlog)."""
    try:
        depths = queue_depths()
    except Exception:  # noqa: BLE001 - the broker is away: do not resume anything on a guess
        log.warning("sweep: queue depths unavailable; runs between stages are left alone")
        return 1
    return sum(n for q, n in depths.items() if q != settings.queue_api)


@engram_task("engram.maintenance.sweep_runs")
def sweep_runs(self) -> dict:
    """Resume runs whose worker died (no heartbeat), or fail them after run_max_attempts.

    Every flow whose runs live in pipeline_runs is swept (cognify, whole-dataset graph passes,
    capture); improve runs end with their claim (engram.improve.sweep_claims).
    A run with a stage running goes stale after the heartbeat timeout; a pending one only after
    the broker's visibility timeout; one between stages after the heartbeat timeout only when
    no message waits in the pipeline queues (else after the visibility timeout), since a long
    queue is not a dead worker.
    """
    settings = get_settings()
    resumed, failed = [], []
    backlog: int | None = None
    with Store().unit_of_work() as uow:
        for run in uow.runs.stale(settings.run_heartbeat_timeout_seconds):
            flow = FLOWS.get(run["pipeline"])
            if flow is None or flow.runs != "pipeline":
                continue
            if not uow.runs.stale_since(run, settings.visibility_timeout):
                if run["status"] == "pending":
                    continue  # still queued behind other work, most likely
                if not any(s["status"] == "running" for s in uow.runs.stages(run["id"])):
                    # Between stages: its next message waits in a queue, or died with a worker
                    # that held it. While messages wait, a long queue is not a dead worker (a
                    # worker that dies mid-stage leaves that stage `running`).
                    if backlog is None:
                        backlog = _pipeline_backlog(settings)
                    if backlog:
                        continue
            if run["attempts"] + 1 >= settings.run_max_attempts:
                uow.runs.finish_run(run["id"], "failed", error="abandoned: no worker finished it after "
                                    f"{run['attempts'] + 1} attempts (retry with engram.cognify)")
                failed.append(run["id"])
            else:
                resumed.append((flow, run["id"], uow.runs.reopen(run["id"])))
    for flow, run_id, stages in resumed:  # each resumed run is its own chain: no dataset callback to rebuild
        start_runs([(run_id, stages)], flow)
    if resumed or failed:
        log.warning("sweep: resumed %d runs, failed %d", len(resumed), len(failed))
    return {"resumed": [str(r) for _, r, _ in resumed], "failed": [str(r) for r in failed]}


@engram_task("engram.maintenance.vector_indexes")
def sweep_vector_indexes(self) -> dict:
    """Per-dataset vector indexes (adapters/store/vector_indexes.py): built for each dataset past
    the threshold on a vector table, dropped where the dataset's rows are gone; a failed build
    waits (backing off) and does not stop the others."""
    done = Store().vector_indexes().sweep()
    if done["built"] or done["rebuilt"] or done["dropped"]:
        log.info("vector index sweep: built %s, rebuilt %s, dropped %s", done["built"], done["rebuilt"], done["dropped"])
    if done["failed"] or done["waiting"]:
        log.warning("vector index sweep: failed %s, waiting to retry %s", done["failed"], done["waiting"])
    return done
