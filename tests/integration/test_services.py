"""The embedded servers keep their URL across restarts, so running workers reconnect to them."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from improve_helpers import wait_until

from engram.adapters import services
from engram.settings import Settings


@pytest.fixture
def state_dir():
    path = Path(tempfile.mkdtemp(prefix="engram-s-", dir="/tmp"))
    yield path
    s = Settings(state_dir=path)
    services.stop_embedded_redis(s)
    services.stop_embedded_postgres(s)
    shutil.rmtree(path, ignore_errors=True)


def test_embedded_redis_comes_back_on_the_same_port_after_it_died_or_stopped(state_dir):
    s = Settings(state_dir=state_dir, database_url="postgresql://unused/x", redis_url=None)
    first = services.resolve(s).redis_url
    import redis

    client = redis.Redis.from_url(first)
    client.ping()  # a connection the server closes on stop: its port lingers in TIME_WAIT
    pid = int((state_dir / "redis" / "redis.pid").read_text())
    os.kill(pid, signal.SIGKILL)  # died
    assert services.resolve(s).redis_url == first
    assert services.resolve(s).redis_url == first and client.ping()
    assert services.stop_embedded_redis(s)  # stopped on purpose
    assert services.resolve(s).redis_url == first
    assert client.ping()  # the same client reconnects


def test_embedded_postgres_keeps_its_url_across_a_restart(state_dir):
    s = Settings(state_dir=state_dir, database_url=None, redis_url="redis://unused:1/0")
    first = services.resolve(s).database_url
    assert services.stop_embedded_postgres(s)
    assert services.resolve(s).database_url == first
    assert (state_dir / "postgres.url").read_text() in first.replace("postgresql+psycopg://", "postgresql://")


def test_a_process_stops_exactly_the_embedded_servers_it_started(state_dir):
    """The demo and the benchmarks stop what they started and leave running servers alone."""
    s = Settings(state_dir=state_dir, database_url=None, redis_url=None)
    assert services.embedded_to_start(s) == {"postgres", "redis"}
    assert services.embedded_to_start(Settings(state_dir=state_dir, redis_url=None,
                                               database_url="postgresql://elsewhere/x")) == {"redis"}
    services.resolve(s)
    assert services.embedded_to_start(s) == set()  # running: another process's to stop
    pid = int((state_dir / "redis" / "redis.pid").read_text())
    os.kill(pid, signal.SIGKILL)  # a crash leaves its pid file behind
    # The signal lands asynchronously: wait for the process to go.
    wait_until(lambda: services.embedded_to_start(s) == {"redis"}, timeout=10, poll=0.05,
               what="the killed embedded Redis to count as not running")
    services.resolve(s)
    services.stop_embedded(s, {"postgres", "redis"})
    assert services.embedded_to_start(s) == {"postgres", "redis"}
    with pytest.raises(OSError):
        os.kill(int((state_dir / "redis" / "redis.pid").read_text()), 0)


SESSION_PRIORITY = """
import os, sys
os.nice(int(sys.argv[1]))
from engram.adapters.store.engine import get_engine
with get_engine().connect() as conn:
    backend = conn.connection.dbapi_connection.info.backend_pid
    print(os.getpriority(os.PRIO_PROCESS, backend))
"""


@pytest.mark.parametrize("nice", [0, 10])
def test_a_niced_process_s_postgres_session_runs_at_its_niceness(services, nice):
    """A pipeline process (niced) asks Postgres for its stage SQL; that backend yields the CPU to
    the api worker's sessions as the process itself does, instead of competing as an equal."""
    import subprocess
    import sys

    server = int(next(Path(os.environ["ENGRAM_STATE_DIR"]).rglob("postmaster.pid")).read_text().split()[0])
    done = subprocess.run([sys.executable, "-c", SESSION_PRIORITY, str(nice)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) == max(nice, os.getpriority(os.PRIO_PROCESS, server))


def _shared_buffers(url: str) -> str:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return conn.execute("SHOW shared_buffers").fetchone()[0]


def test_the_embedded_postgres_runs_with_the_configured_shared_buffers_from_its_first_start(state_dir):
    """initdb's 128MB would keep a big deployment's vector graphs out of memory: the server's
    first start already has the setting, and a changed setting holds from the next start."""
    s = Settings(state_dir=state_dir, database_url=None, redis_url="redis://unused:1/0",
                 embedded_shared_buffers="192MB")
    url = services.resolve(s).database_url
    assert _shared_buffers(url) == "192MB"
    changed = s.model_copy(update={"embedded_shared_buffers": "256MB"})
    assert services.resolve(changed).database_url == url
    assert _shared_buffers(url) == "192MB"  # a running server keeps its memory until it restarts
    assert services.stop_embedded_postgres(changed)
    assert services.resolve(changed).database_url == url
    assert _shared_buffers(url) == "256MB"
    assert "shared_buffers = '256MB'" in (state_dir / "postgres" / services.SERVER_CONF).read_text()
