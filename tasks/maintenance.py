"""Maintenance tasks driven by beat: sweeps of abandoned work."""

from __future__ import annotations

import logging

from engram.adapters.store import Store
from engram.pipelines.flows import BY_NAME as FLOWS
from engram.settings import get_settings
from engram.tasks.base import engram_task

log = logging.getLogger("engram.maintenance")


@engram_task("engram.maintenance.sweep_runs")
def sweep_runs(self) -> dict:
    """Resume runs whose worker died (no heartbeat), or fail them after run_max_attempts.

    Every flow whose runs live in pipeline_runs is swept (cognify, whole-dataset graph passes,
    capture); improve runs end with their claim (engram.improve.sweep_claims).
    A run with a stage running goes stale after the heartbeat timeout; a pending one, or one
    between stages, only after the broker's visibility timeout, since a long queue is not a
    dead worker.
    """
    from engram.tasks.engine import start_runs

    settings = get_settings()
    resumed, failed = [], []
    with Store().unit_of_work() as uow:
        for run in uow.runs.stale(settings.run_heartbeat_timeout_seconds):
            flow = FLOWS.get(run["pipeline"])
            if flow is None or flow.runs != "pipeline":
                continue
            if not uow.runs.stale_since(run, settings.visibility_timeout) and (
                    run["status"] == "pending"
                    or not any(s["status"] == "running" for s in uow.runs.stages(run["id"]))):
                # Pending, or between stages (no stage running: its next message is queued behind
                # a backlog): a long queue is not a dead worker. A worker that dies mid-stage
                # leaves that stage `running`.
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
