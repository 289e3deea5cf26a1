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


class BrokerDatabases:
    """Redis databases 2..15 for extra workers (1 is the shared worker's); stopping gives one back."""

    def __init__(self) -> None:
        self.free = list(range(2, 16))

    def take(self) -> int:
        if not self.free:
            raise RuntimeError("all 14 broker databases are in use: stop a worker before starting another")
        return self.free.pop(0)

    def give_back(self, db: int) -> None:
        if db not in self.free:
            self.free.append(db)
            self.free.sort()


BROKER_DATABASES = BrokerDatabases()


def _retrying_redis(call, attempts: int = 5):
    """A Redis call that rides out a connection closed under it (the fault suite restarts Redis)."""
    import redis

    for attempt in range(attempts):
        try:
            return call()
        except redis.ConnectionError:
            if attempt == attempts - 1:
                raise
            time.sleep(1.0)


class WorkerHandle:
    """A real `engram worker` process with its own broker database and settings.

    `broker_of` shares another handle's broker database (a second worker of the same fleet,
    or a replacement for a killed one) instead of taking a fresh, flushed one.
    """

    def __init__(self, services, env: dict[str, str], concurrency: int, log_dir: Path,
                 broker_of: WorkerHandle | None = None, redis_db: int | None = None):
        from engram.celery_app import create_app
        from engram.tasks.client import EngramClient

        self.owns_db = broker_of is None and redis_db is None
        if broker_of is not None:
            redis_db = broker_of.redis_db
        elif redis_db is None:
            redis_db = BROKER_DATABASES.take()
        self.redis_db = redis_db
        self.redis_url = _redis_db_url(services.redis_url, redis_db)
        # Stage processes at normal priority: this machine is shared with other suites, and niced
        # ones would miss the short heartbeat timeouts some tests set.
        self.env = dict(os.environ, ENGRAM_REDIS_URL=self.redis_url, **{"ENGRAM_PIPELINE_NICE": "0", **env})
        self.concurrency = concurrency
        self.log_path = log_dir / f"worker-{redis_db}-{uuid.uuid4().hex[:6]}.log"
        import redis

        if broker_of is None:
            _retrying_redis(lambda: redis.Redis.from_url(self.redis_url).flushdb())
        saved = dict(os.environ)
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("ENGRAM_")})
        reset_settings()
        try:
            self.app = create_app()
            self.settings = get_settings()
        finally:
            os.environ.clear()
            os.environ.update(saved)
            reset_settings()
        self.client = EngramClient(self.app, timeout=120)
        self.proc: subprocess.Popen | None = None

    def start(self, name: str | None = None, queues: str = "") -> WorkerHandle:
        """Start the process (under node name `name@host`, else a generated one; `queues` as
        `engram worker --queues`); wait until each of its Celery workers (the pipeline worker and
        the api worker) answers a ping."""
        from engram.cli.worker import plan

        name = name or f"t{uuid.uuid4().hex[:6]}"
        log = open(self.log_path, "ab")
        argv = [sys.executable, "-m", "engram.cli", "worker", f"--concurrency={self.concurrency}",
                "--loglevel=info", "--without-heartbeat", "--without-mingle", "--without-gossip",
                f"--hostname={name}@%h", *([f"--queues={queues}"] if queues else [])]
        expected = {spec.hostname.split("@")[0] for spec in plan(self.settings, concurrency=self.concurrency,
                                                                  hostname=f"{name}@%h", queues=queues)}
        self.proc = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 600  # the model loads before the first ping
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited ({self.proc.returncode}); log:\n{self.log_path.read_text()[-3000:]}")
            try:
                replies = self.app.control.ping(timeout=0.5) or []
            except Exception as exc:  # a connection the fault suite's Redis restart left closed: ask again
                if "onnection" not in type(exc).__name__ + str(exc):
                    raise
                time.sleep(0.5)
                continue
            if expected <= {node.split("@")[0] for reply in replies for node in reply}:
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
        if self.owns_db:
            BROKER_DATABASES.give_back(self.redis_db)
            self.owns_db = False


@pytest.fixture(scope="session")
def worker(services, tmp_path_factory):
    """The shared worker: offline LLM, concurrency 2, broker database 1."""
    handle = WorkerHandle(services, {}, 2, tmp_path_factory.mktemp("logs"), redis_db=1).start()
    yield handle
    handle.stop()


@pytest.fixture
def client(worker):
    return worker.client


@pytest.fixture(scope="session")
def spawn_worker(services, tmp_path_factory):
    """Make a worker with its own settings (env); the caller stops it (module-scoped fleets)."""

    def spawn(env: dict[str, str] | None = None, concurrency: int = 1, *, name: str | None = None,
              broker_of: WorkerHandle | None = None, start: bool = True) -> WorkerHandle:
        handle = WorkerHandle(services, env or {}, concurrency, tmp_path_factory.mktemp("logs"), broker_of=broker_of)
        return handle.start(name) if start else handle

    return spawn


@pytest.fixture
def worker_factory(spawn_worker):
    """Like spawn_worker, but every worker made is stopped when the test ends."""
    started: list[WorkerHandle] = []

    def make(env: dict[str, str] | None = None, concurrency: int = 1, start: bool = True,
             broker_of: WorkerHandle | None = None) -> WorkerHandle:
        handle = spawn_worker(env, concurrency, broker_of=broker_of, start=False)
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
