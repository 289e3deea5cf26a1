"""The producer API: a bare Celery producer reaches Engram by task name alone, and accepting and
status answer while every pipeline process is busy."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from celery import Celery
from sqlalchemy import text

README = Path(__file__).resolve().parents[2] / "README.md"
SLOW = 45  # seconds one extraction call holds a pipeline process


def readme_producer_snippet() -> str:
    section = README.read_text().split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run_snippet(redis_url: str, cwd: Path) -> subprocess.CompletedProcess:
    # A bare process: only Celery, the broker URL, and the snippet exactly as the README shows it.
    env = {"PATH": "/usr/bin:/bin", "ENGRAM_REDIS_URL": redis_url}
    return subprocess.run([sys.executable, "-I", "-c", readme_producer_snippet()], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=240)


def test_the_readme_producer_snippet_runs_verbatim(worker, tmp_path):
    done = run_snippet(worker.redis_url, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("accepted "), done.stdout

    # The CLI shows the dataset's runs and what waits in each queue.
    env = dict(os.environ, ENGRAM_REDIS_URL=worker.redis_url, COLUMNS="200")
    cli = subprocess.run([sys.executable, "-m", "engram.cli", "status", "--dataset", "support-kb", "--user", "alice"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    line = next(x for x in cli.stdout.splitlines() if x.startswith("queued (messages waiting):"))
    assert {q: int(n) >= 0 for q, n in re.findall(r"(\w+) (\d+)", line)} == dict.fromkeys(
        ["celery", "ingest", "llm", "embed", "maintenance"], True), line


def _bare_producer(redis_url: str) -> Celery:
    return Celery(broker=redis_url, backend=redis_url)


def test_accept_and_status_answer_while_every_pipeline_process_is_busy(worker_factory, store, dataset_name,
                                                                        tmp_path):
    cassette = tmp_path / "slow.json"
    cassette.write_text(json.dumps({"version": 1, "entries": [{
        "contains": "", "response_model": "ChunkExtraction", "delay_seconds": SLOW,
        "response": {"graph": {"nodes": [], "edges": []}, "summary": {"summary": "s", "description": ""}}}]}))
    # A bound of 2 open runs: the accept below has at least 3 ahead and must say so.
    busy = worker_factory({"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_ACCEPT_BACKLOG_BOUND": "2"},
                          concurrency=2)
    producer = _bare_producer(busy.redis_url)
    try:
        first = producer.send_task("engram.remember", kwargs={
            "dataset": dataset_name, "create_dataset": True,
            "items": [{"text": f"Slow document number {i} about the harbour.", "name": f"slow-{i}.txt"}
                      for i in range(3)]}).get(timeout=60)
        run_ids = [r["run_id"] for r in first["runs"]]
        deadline = time.monotonic() + 90
        running = 0
        while running < 2 and time.monotonic() < deadline:  # both pipeline processes in an LLM call
            with store.unit_of_work() as uow:
                running = uow.conn.execute(text(
                    "SELECT count(*) FROM stage_runs WHERE run_id::text = ANY(:r)"
                    " AND stage = 'extract_graph_and_summarize' AND status = 'running'"), {"r": run_ids}).scalar_one()
            time.sleep(0.2)
        assert running == 2, "the pipeline processes never got busy"

        started = time.monotonic()
        accepted = producer.send_task("engram.remember", kwargs={
            "dataset": dataset_name, "items": [{"text": "Accepted while the fleet is saturated."}]}).get(timeout=SLOW / 3)
        status = producer.send_task("engram.status", kwargs={"run_id": accepted["runs"][0]["run_id"]}).get(
            timeout=SLOW / 3)
        turn = producer.send_task("engram.remember", kwargs={
            "dataset": dataset_name, "session_id": "chat-1", "question": "q?", "answer": "a."}).get(timeout=SLOW / 3)
        overview = producer.send_task("engram.status", kwargs={"dataset": dataset_name}).get(timeout=SLOW / 3)
        waited = time.monotonic() - started
        assert accepted["status"] == "accepted" and accepted["runs"][0]["duplicate"] is False
        assert accepted["queued_ahead"] >= 3 and "eta_s" in accepted  # back-pressure, not a stall
        assert set(overview["queues"]) == {"celery", "ingest", "llm", "embed", "maintenance"}
        assert overview["queues"]["ingest"] >= 1  # the new run's first stage waits for a process
        assert status["runs"][0]["status"] == "pending"  # queued behind the busy processes, and we can see it
        assert turn["status"] == "session_stored"
        assert waited < SLOW / 2
        with store.unit_of_work() as uow:  # still busy: the answers did not wait for a free process
            assert uow.conn.execute(text(
                "SELECT count(*) FROM stage_runs WHERE run_id::text = ANY(:r)"
                " AND stage = 'extract_graph_and_summarize' AND status = 'running'"), {"r": run_ids}).scalar_one() == 2
    finally:
        busy.kill()
