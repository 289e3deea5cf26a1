"""The `engram` commands that run and check the fleet, as an operator runs them: services,
db, worker, health, flower, doctor and demo. The frictions of issue 34: `db upgrade` on a
broken server printed a traceback, `worker` on a database without the schema sent the user in
a circle, `services stop` called an external Redis stopped, a `.env` was read unannounced."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cli_helpers import engram, one_line_error
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from engram.adapters.store import migrate


def ok(out) -> str:
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.fixture
def fresh_database(services):
    """An empty database on the test server (no schema, no pgvector extension yet)."""
    name = f"fresh_{uuid.uuid4().hex[:8]}"
    admin = create_engine(services.database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(services.database_url).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


def test_worker_and_db_upgrade_run_doctors_checks_first_and_print_its_fix(services, fresh_database):
    env = {"ENGRAM_DATABASE_URL": fresh_database}
    line = one_line_error(engram(services.redis_url, "worker", env=env))
    assert "migrations" in line and "fix: engram db upgrade" in line
    head = migrate.head_revision()
    assert f"database at revision {head}" in ok(engram(services.redis_url, "db", "upgrade", env=env))
    assert migrate.current_revision(fresh_database) == head
    assert "database at revision None" in ok(engram(services.redis_url, "db", "downgrade", "base", env=env))
    assert migrate.current_revision(fresh_database) is None


def test_db_upgrade_against_an_unreachable_server_is_one_line_with_doctors_fix(services):
    env = {"ENGRAM_DATABASE_URL": "postgresql://engram@127.0.0.1:9/engram"}  # nothing listens on port 9
    line = one_line_error(engram(services.redis_url, "db", "upgrade", env=env))
    assert line.startswith("error: postgres: cannot connect") and "ENGRAM_DATABASE_URL" in line


def test_services_start_and_stop_an_embedded_redis_and_leave_an_external_one_alone(services, tmp_path):
    import redis

    state = tmp_path / "state"
    env = {"ENGRAM_STATE_DIR": str(state), "ENGRAM_DATABASE_URL": services.database_url}
    started = json.loads(ok(engram(None, "services", "start", env={**env, "ENGRAM_REDIS_URL": None})))
    try:
        assert started["redis_url"] != services.redis_url and redis.Redis.from_url(started["redis_url"]).ping()
        out = ok(engram(None, "services", "stop", env={**env, "ENGRAM_REDIS_URL": services.redis_url}))
        assert "postgres: external (ENGRAM_DATABASE_URL is set), left running" in out
        assert "redis: external (ENGRAM_REDIS_URL is set), left running" in out
        assert redis.Redis.from_url(services.redis_url).ping()
        # What the Quick start evaluates: the embedded Redis's URL (and a configured broker), as shell.
        exports = ok(engram(None, "services", "env", env={**env, "ENGRAM_REDIS_URL": None,
                                                          "ENGRAM_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672//"}))
        shell = subprocess.run(["bash", "-c", exports + '\necho "$ENGRAM_REDIS_URL|$ENGRAM_BROKER_URL"'],
                               capture_output=True, text=True, check=True)
        assert shell.stdout.strip() == started["redis_url"] + "|amqp://guest:guest@127.0.0.1:5672//"
    finally:
        # A shell that evaluated it names the embedded Redis in ENGRAM_REDIS_URL: still Engram's to stop.
        out = ok(engram(None, "services", "stop", env={**env, "ENGRAM_REDIS_URL": started["redis_url"]}))
    assert "redis: stopped" in out
    assert "redis: not running" in ok(engram(None, "services", "stop", env={**env, "ENGRAM_REDIS_URL": None}))


def test_health_answers_for_a_running_worker_and_names_the_fix_for_a_missing_beat(worker):
    assert "worker: ok" in ok(engram(worker.redis_url, "health", "worker"))
    assert "fix: start one: engram beat" in one_line_error(engram(worker.redis_url, "health", "beat"))
    assert "engram health worker" in one_line_error(engram(worker.redis_url, "health", "nosuch"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_flower_starts_and_its_healthcheck_answers(worker):
    port = _free_port()
    assert f"engram flower --port {port}" in one_line_error(
        engram(worker.redis_url, "health", "flower", "--port", str(port)))
    env = dict(os.environ, ENGRAM_REDIS_URL=worker.redis_url, FLOWER_UNAUTHENTICATED_API="true")
    proc = subprocess.Popen([sys.executable, "-m", "engram.cli", "flower", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(120):
            out = engram(worker.redis_url, "health", "flower", "--port", str(port))
            if out.returncode == 0 or proc.poll() is not None:
                break
            time.sleep(0.5)
        assert out.returncode == 0 and "flower: ok" in out.stdout, out.stdout
    finally:
        proc.terminate()
        proc.wait(30)


def test_doctor_says_when_it_reads_a_dotenv_file(services, tmp_path):
    (tmp_path / ".env").write_text("ENGRAM_API_THREADS=4\n")
    out = engram(services.redis_url, "doctor", cwd=tmp_path)
    flat = " ".join(out.stdout.split())
    assert "settings also read from" in flat and ".env" in flat, out.stdout


def test_the_demo_marks_the_current_ceo_and_says_the_sources_disagree(services, worker_factory):
    handle = worker_factory(start=False)  # only its broker database: the demo starts its own worker
    out = ok(engram(handle.redis_url, "demo", timeout=900))
    print(out)
    assert "24 completed, 0 failed" in out and "worker stopped; demo done" in out
    ceo = out.split("Who is the CEO of Harbor Dynamics?", 1)[1].split("When was Alder Bay University founded?", 1)[0]
    facts = [line for line in ceo.splitlines() if "[triplet]" in line]
    # The current CEO first; the earlier one marked former, with the years it held the post.
    assert "Bob Lindqvist" in facts[0] and "(former)" not in facts[0], ceo
    assert any("Alice Moreau" in f and "2020–2024" in f for f in facts[1:]), ceo
    assert all("(former)" in f for f in facts[1:]), ceo
    founded = out.split("When was Alder Bay University founded?", 1)[1].split("What happened during", 1)[0]
    disagree = " ".join(founded.split("The sources disagree:", 1)[1].split())
    assert "1962" in disagree and "1968" in disagree, founded
    # It ends by saying where to look next: the runs, Flower.
    tail = " ".join(out.split("Where to look next", 1)[1].split())
    assert "engram status -d demo" in tail and "engram flower" in tail and "http://localhost:5555" in tail, tail


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_pipeline_processes_yield_the_cpu_as_a_session_of_their_own_and_stop_with_the_worker(worker_factory):
    """The README's `engram worker`: its niced pipeline processes run in a session of their own
    (with autogroup scheduling, niceness alone only counts within the api worker's session), and
    they do not outlive a supervisor killed outright."""
    import signal

    handle = worker_factory(env={"ENGRAM_PIPELINE_NICE": "10"})
    supervisor = handle.proc.pid
    by_nice = {os.getpriority(os.PRIO_PROCESS, pid): pid for pid in _children(supervisor)}
    pipeline, api = by_nice[10], by_nice[0]
    assert os.getsid(pipeline) == pipeline and os.getsid(api) == os.getsid(supervisor)
    autogroup = Path(f"/proc/{pipeline}/autogroup")
    if autogroup.exists():
        assert autogroup.read_text().split()[-1] == "10"
    os.kill(supervisor, signal.SIGKILL)
    handle.proc.wait()
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pipeline}").exists() and Path(f"/proc/{pipeline}/stat").read_text().split()[2] != "Z":
        assert time.monotonic() < deadline, "the pipeline worker outlived its supervisor"
        time.sleep(0.5)
    os.killpg(supervisor, signal.SIGKILL)  # the api worker, still in the supervisor's group
