"""Real parts: embedded PostgreSQL with pgvector, a real Redis, real Celery worker processes.

Set ENGRAM_DATABASE_URL / ENGRAM_REDIS_URL to run against external servers instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from engram.settings import get_settings, reset_settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def services():
    from engram.adapters.services import resolve, stop_embedded_postgres, stop_embedded_redis
    from engram.adapters.store import migrate

    reset_settings()
    settings = get_settings()
    urls = resolve(settings)
    migrate.upgrade(urls.database_url)
    os.environ["ENGRAM_DATABASE_URL"] = urls.database_url
    os.environ["ENGRAM_REDIS_URL"] = urls.redis_url
    reset_settings()
    yield urls
    os.environ.pop("ENGRAM_DATABASE_URL", None)
    os.environ.pop("ENGRAM_REDIS_URL", None)
    from engram.adapters.store.engine import dispose_engine

    dispose_engine()
    if urls.embedded_postgres:
        stop_embedded_postgres(settings)
    if urls.embedded_redis:
        stop_embedded_redis(settings)
    if settings.state_dir.name.startswith("engram-t-"):
        shutil.rmtree(settings.state_dir, ignore_errors=True)


def _redis_db_url(base: str, db: int) -> str:
    return base.rsplit("/", 1)[0] + f"/{db}"


class WorkerHandle:
    """A real `engram worker` process with its own broker database and settings."""

    def __init__(self, services, env: dict[str, str], redis_db: int, concurrency: int, log_dir: Path,
                 flush: bool = True):
        from engram.celery_app import create_app
        from engram.tasks.client import EngramClient

        self.redis_url = _redis_db_url(services.redis_url, redis_db)
        self.env = dict(os.environ, ENGRAM_REDIS_URL=self.redis_url, **env)
        self.concurrency = concurrency
        self.log_path = log_dir / f"worker-{redis_db}-{uuid.uuid4().hex[:6]}.log"
        import redis

        if flush:
            redis.Redis.from_url(self.redis_url).flushdb()
        saved = dict(os.environ)
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("ENGRAM_")})
        reset_settings()
        try:
            self.app = create_app()
        finally:
            os.environ.clear()
            os.environ.update(saved)
            reset_settings()
        self.client = EngramClient(self.app, timeout=120)
        self.proc: subprocess.Popen | None = None

    def start(self) -> WorkerHandle:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engram.cli", "worker", f"--concurrency={self.concurrency}",
             "--loglevel=info", "--without-heartbeat", "--without-mingle", "--without-gossip"],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited ({self.proc.returncode}); log:\n{self.log_path.read_text()[-3000:]}")
            if self.app.control.ping(timeout=0.5):
                return self
        raise TimeoutError(f"worker did not start; log:\n{self.log_path.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children), like a lost machine."""
        import signal

        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        import signal

        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # warm shutdown; the main process stops its pool
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


_next_db = iter(range(2, 16))


@pytest.fixture(scope="session")
def worker(services, tmp_path_factory):
    """The shared worker: offline LLM, concurrency 2, broker database 1."""
    handle = WorkerHandle(services, {}, 1, 2, tmp_path_factory.mktemp("logs")).start()
    yield handle
    handle.stop()


@pytest.fixture
def client(worker):
    return worker.client


@pytest.fixture
def worker_factory(services, tmp_path_factory):
    """Start extra workers with their own settings (env) on their own broker database."""
    started: list[WorkerHandle] = []

    def make(env: dict[str, str] | None = None, concurrency: int = 1, start: bool = True,
             broker_of: WorkerHandle | None = None) -> WorkerHandle:
        """`broker_of`: share that worker's broker database (a replacement for a killed worker)."""
        db = int(broker_of.redis_url.rsplit("/", 1)[1]) if broker_of else next(_next_db)
        handle = WorkerHandle(services, env or {}, db, concurrency, tmp_path_factory.mktemp("logs"),
                              flush=broker_of is None)
        started.append(handle)
        return handle.start() if start else handle

    yield make
    for handle in started:
        handle.stop()


@pytest.fixture
def store(services):
    from engram.adapters.store import Store

    return Store()


@pytest.fixture
def dataset_name():
    return f"ds-{uuid.uuid4().hex[:10]}"
