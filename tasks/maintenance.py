"""Maintenance tasks driven by beat: sweeps of abandoned work."""

from __future__ import annotations

import logging

from engram.adapters.store import Store
from engram.settings import get_settings
from engram.tasks.base import engram_task

log = logging.getLogger("engram.maintenance")


@engram_task("engram.maintenance.sweep_runs")
def sweep_runs(self) -> dict:
    """Resume runs whose worker died (no heartbeat), or fail them after run_max_attempts.

    Running runs go stale after the heartbeat timeout; pending ones only after the broker's
    visibility timeout, since a long queue is not a dead worker.
    """
    from engram.tasks.cognify import start_runs

    settings = get_settings()
    resumed, failed = [], []
    with Store().unit_of_work() as uow:
        for run in uow.runs.stale(settings.run_heartbeat_timeout_seconds):
            if run["pipeline"] != "cognify":
                continue
            if run["status"] == "pending" and not uow.runs.stale_since(run, settings.visibility_timeout):
                continue  # still queued behind other work, most likely
            if run["attempts"] + 1 >= settings.run_max_attempts:
                uow.runs.finish_run(run["id"], "failed", error="abandoned: no worker finished it after "
                                    f"{run['attempts'] + 1} attempts (retry with engram.cognify)")
                failed.append(run["id"])
            else:
                resumed.append((run["id"], uow.runs.reopen(run["id"])))
    for run in resumed:  # each resumed run is its own chain: no dataset callback to rebuild
        start_runs([run])
    if resumed or failed:
        log.warning("sweep: resumed %d runs, failed %d", len(resumed), len(failed))
    return {"resumed": [str(r) for r, _ in resumed], "failed": [str(r) for r in failed]}
