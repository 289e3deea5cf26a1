"""Helpers for the improve tests: worker fleets on one broker, beat processes, polling, SQL.

Also the host admission hook the fleet is configured with (its import path is
engram.tests.integration.improve_helpers:admission).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text


def admission(request: dict):
    """Decline, raise or answer garbage depending on the dataset's name prefix."""
    dataset = request.get("dataset") or ""
    if any(sid.startswith("nope-") for sid in request.get("session_ids") or []):
        return "session_over_quota"
    if dataset.startswith("broke-"):
        return "insufficient_credits"
    if dataset.startswith("boom-"):
        raise RuntimeError("host billing service is down")
    if dataset.startswith("weird-"):
        return 42
    return None


ADMISSION_PATH = "engram.tests.integration.improve_helpers:admission"


def wait_until(predicate, timeout: float = 180.0, what: str = "condition", poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(poll)


def rows(store, sql: str, **params) -> list[dict]:
    with store.unit_of_work() as uow:
        return [dict(r) for r in uow.conn.execute(text(sql), params).mappings()]


def scalar(store, sql: str, **params):
    with store.unit_of_work() as uow:
        return uow.conn.execute(text(sql), params).scalar()


def dataset_id(store, name: str):
    return scalar(store, "SELECT id FROM datasets WHERE name = :n", n=name)


def runs(store, dataset: str, session: str | None = None) -> list[dict]:
    return rows(store, "SELECT r.* FROM pipeline_runs r JOIN datasets d ON d.id = r.dataset_id"
                " WHERE r.pipeline = 'improve' AND d.name = :n AND (CAST(:s AS text) IS NULL OR :s = ANY(r.session_ids))"
                " ORDER BY r.created_at", n=dataset, s=session)


def stages(store, run_id) -> dict[str, dict]:
    return {r["stage"]: r for r in rows(store, "SELECT *, output AS counts FROM stage_runs WHERE run_id = :r",
                                             r=run_id)}


def claims(store, dataset: str) -> list[dict]:
    return rows(store, "SELECT c.* FROM improve_claims c JOIN datasets d ON d.id = c.dataset_id"
                " WHERE d.name = :n ORDER BY c.claimed_at", n=dataset)


def session_state(store, dataset: str, session: str) -> dict | None:
    found = rows(store, "SELECT s.* FROM session_improve_state s JOIN datasets d ON d.id = s.dataset_id"
                 " WHERE d.name = :n AND s.session_id = :s", n=dataset, s=session)
    return found[0] if found else None


def max_seq(store, dataset: str, session: str) -> int:
    return scalar(store, "SELECT coalesce(max(e.seq), 0) FROM session_entries e JOIN datasets d"
                  " ON d.id = e.dataset_id WHERE d.name = :n AND e.session_id = :s", n=dataset, s=session)


def settled(store, dataset: str) -> bool:
    """No claim held, no run running, no rerun request left for the dataset."""
    return not rows(
        store,
        "SELECT 1 FROM datasets d WHERE d.name = :n AND ("
        " EXISTS (SELECT 1 FROM improve_claims c WHERE c.dataset_id = d.id AND c.status = 'held')"
        " OR EXISTS (SELECT 1 FROM pipeline_runs r WHERE r.dataset_id = d.id AND r.pipeline = 'improve'"
        "   AND r.status = 'running')"
        " OR EXISTS (SELECT 1 FROM session_improve_state s WHERE s.dataset_id = d.id"
        "   AND s.rerun_requested_at IS NOT NULL))", n=dataset)


def fully_processed(store, dataset: str, session: str) -> bool:
    state = session_state(store, dataset, session)
    return bool(state) and state["watermark_seq"] == max_seq(store, dataset, session) and settled(store, dataset)


# ------------------------------------------------------------------ processes


class Beat:
    """A real `engram beat` process on a broker; counts the tasks it sent from its log."""

    def __init__(self, env: dict, log_path: Path):
        self.log_path = log_path
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engram.cli", "beat", "--loglevel=info"],
            env=env, stdout=open(log_path, "ab"), stderr=subprocess.STDOUT, start_new_session=True)

    def sent(self, entry: str | None = None) -> int:
        lines = self.log_path.read_text(errors="replace").splitlines() if self.log_path.exists() else []
        return sum(1 for line in lines if "Sending due task" in line and (entry is None or entry in line))

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
