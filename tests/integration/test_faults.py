"""Fault suite (`-m faults`): a SIGKILL storm mid-ingest. Every accepted document ends
completed; nothing is lost, nothing duplicated (the graph equals the pure pipeline's), no run
is left open. Prints its figures (FAULT FIGURES ...)."""

from __future__ import annotations

import random
import threading
import time
import uuid

import pytest

from engram.tests.integration.faults import corpus, figures, wait_terminal

pytestmark = pytest.mark.faults

# Lost deliveries come back after the visibility timeout (2 x longest task): keep it short here.
# A shared 2-core machine is slow: generous task limits; a short heartbeat so the sweep (beat's
# job, ticked by the test) resumes runs whose worker was killed mid-stage.
FAULT_ENV = {"ENGRAM_LONGEST_TASK_SECONDS": "150", "ENGRAM_RUN_HEARTBEAT_TIMEOUT_SECONDS": "10", "ENGRAM_RETRY_BACKOFF_BASE_SECONDS": "0.5",
             "ENGRAM_RETRY_BACKOFF_MAX_SECONDS": "4", "ENGRAM_TASK_MAX_RETRIES": "8", "ENGRAM_ACCEPT_MAX_RETRIES": "15"}


def _dataset(store, name: str, user: str = "default") -> uuid.UUID:
    with store.unit_of_work() as uow:
        return uow.access.find_own(name, user)


def _retrying(store, dataset) -> bool:
    from sqlalchemy import text

    with store.unit_of_work() as uow:
        return bool(uow.conn.execute(text(
            "SELECT 1 FROM stage_runs s JOIN pipeline_runs r ON r.id = s.run_id WHERE r.dataset_id = :d"
            " AND s.error LIKE 'retrying:%rate%'"), {"d": dataset}).first())


def _sweep(fleet) -> None:
    try:
        fleet.client.call("engram.maintenance.sweep_runs")
    except Exception:  # the worker may be down this very moment; the next tick sweeps
        pass


def _remember_all(client, name: str, docs: list[str]) -> None:
    client.remember(dataset=name, items=[{"text": d} for d in docs])  # one message: a group of chains


def _sigkill_a_child(fleet, rng) -> bool:
    """SIGKILL one pool process: the worker's own supervisor forks a replacement at once."""
    import os
    import signal

    import psutil

    children = psutil.Process(fleet.proc.pid).children()
    if not children:
        return False
    os.kill(rng.choice(children).pid, signal.SIGKILL)
    return True


def test_sigkill_storm_during_ingest_loses_and_duplicates_nothing(spawn_worker, store):
    docs = corpus(200, uuid.uuid4().hex[:6])
    name = f"storm-{uuid.uuid4().hex[:8]}"
    fleet = spawn_worker(FAULT_ENV, concurrency=2, name="storm")
    figures_of = {"kills": 0, "child_kills": 0, "worker_kills": 0, "restarts": 0}
    stop = threading.Event()

    def storm():
        # 20 SIGKILLs: pool processes (the prefork supervisor replaces them) and, every fifth,
        # the whole worker (our supervisor starts it again; its unacked messages come back).
        rng = random.Random(14)
        while figures_of["kills"] < 20 and not stop.is_set():
            time.sleep(rng.uniform(1.0, 2.5))
            if figures_of["kills"] % 5 == 4:
                fleet.kill()
                figures_of["worker_kills"] += 1
                fleet.start("storm")
                figures_of["restarts"] += 1
            elif _sigkill_a_child(fleet, rng):
                figures_of["child_kills"] += 1
                figures_of["restarts"] += 1  # by the pool's supervisor
            else:
                continue
            figures_of["kills"] += 1

    try:
        _remember_all(fleet.client, name, docs)
        thread = threading.Thread(target=storm, daemon=True)
        thread.start()
        thread.join(timeout=900)
        stop.set()
        dataset = _dataset(store, name)
        runs = wait_terminal(store, dataset, len(docs), timeout=1200, tick=lambda: _sweep(fleet))
        out = figures("sigkill storm", store, dataset, docs, runs, **figures_of)
    finally:
        stop.set()
        fleet.stop()
    assert figures_of["kills"] == 20
    assert (out["lost"], out["duplicated"], out["stuck"]) == (0, 0, 0), out
    assert out["completed"] == len(docs), [r["error"] for r in runs if r["status"] == "failed"][:5]
    assert sum(out["missing_rows"].values()) == 0, out
