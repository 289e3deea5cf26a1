"""`engram worker`: a prefork pipeline worker plus a thread-pool worker for the api queue.

Stage work (classify, chunk, extract, embed) is CPU-bound and holds a process for seconds; the
public producer tasks (accept, status, recall) must answer in milliseconds however busy the
fleet is. So one `engram worker` runs two Celery workers under a small supervisor: the
pipeline queues on processes at a lower CPU priority, and the api queue on threads of its own.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

log = logging.getLogger("engram.worker")

RESTARTS_PER_MINUTE = 5  # a child dying faster than this is broken, not unlucky: stop everything


@dataclass(frozen=True)
class WorkerSpec:
    hostname: str
    queues: tuple[str, ...]
    pool: str | None
    concurrency: int
    nice: int

    def argv(self, loglevel: str, extra: list[str]) -> list[str]:
        out = ["worker", f"--hostname={self.hostname}", f"--queues={','.join(self.queues)}",
               f"--concurrency={self.concurrency}", f"--loglevel={loglevel}", "-E"]
        if self.pool:
            out.append(f"--pool={self.pool}")
        return out + extra


def default_hostname() -> str:
    """Unique per worker on a host, so pings, remote control and Flower tell workers apart."""
    return f"engram-{uuid.uuid4().hex[:6]}@%h"


def _api_hostname(hostname: str) -> str:
    name, sep, host = hostname.partition("@")
    return f"{name}-api@{host}" if sep else f"{hostname}-api@%h"


def plan(settings, *, queues: str = "", concurrency: int = 2, pool: str | None = None,
         api_threads: int | None = None, hostname: str | None = None) -> list[WorkerSpec]:
    """The Celery workers one `engram worker` runs. `api` in `queues` names the api queue."""
    api = settings.queue_api
    wanted = [api if q == "api" else q for q in (q.strip() for q in queues.split(",")) if q] or settings.queues
    threads = settings.api_threads if api_threads is None else api_threads
    hostname = hostname or default_hostname()
    pipeline = tuple(q for q in dict.fromkeys(wanted) if q != api)
    if api not in wanted:
        return [WorkerSpec(hostname, pipeline, pool, concurrency, settings.pipeline_nice)]
    if not pipeline:
        return [WorkerSpec(hostname, (api,), pool or "threads", concurrency if pool else max(1, threads), 0)]
    if threads <= 0:  # the api queue shares the pipeline's processes: no lower priority for them
        return [WorkerSpec(hostname, (*pipeline, api), pool, concurrency, 0)]
    return [WorkerSpec(hostname, pipeline, pool, concurrency, settings.pipeline_nice),
            WorkerSpec(_api_hostname(hostname), (api,), "threads", threads, 0)]


def run_one(spec: WorkerSpec, loglevel: str, extra: list[str]) -> None:
    """Run one Celery worker in this process (after the services are up: they keep our priority)."""
    from engram.celery_app import app
    from engram.settings import get_settings

    if spec.nice:
        os.nice(spec.nice)
    settings = get_settings()
    if settings.queue_api in spec.queues and spec.pool == "threads" and settings.embedding_model.startswith("local:"):
        # The api worker's own query embedder, loaded before it consumes: no recall waits for it.
        from engram.adapters.embed import get_embedder

        get_embedder(settings).embed(["warm up the query embedder"])
    app.worker_main(spec.argv(loglevel, extra))


def supervise(specs: list[WorkerSpec], loglevel: str, extra: list[str]) -> int:
    """Run each spec as a child `engram worker`; restart one that dies; stop all on SIGTERM/SIGINT."""
    logging.basicConfig(level=loglevel.upper(), format="[%(asctime)s: %(levelname)s/engram worker] %(message)s")

    def spawn(spec: WorkerSpec) -> subprocess.Popen:
        argv = [sys.executable, "-m", "engram.cli", "worker", f"--hostname={spec.hostname}",
                f"--queues={','.join(spec.queues)}", f"--concurrency={spec.concurrency}",
                f"--loglevel={loglevel}", f"--nice={spec.nice}", "--api-threads=0"]
        if spec.pool:
            argv.append(f"--pool={spec.pool}")
        log.info("starting %s on %s (%s x%d, nice %d)", spec.hostname, ",".join(spec.queues),
                 spec.pool or "prefork", spec.concurrency, spec.nice)
        return subprocess.Popen(argv + extra)

    children = {spec: spawn(spec) for spec in specs}
    stopping: list[int] = []

    def stop(signum, _frame) -> None:
        stopping.append(signum)
        for proc in children.values():  # first a warm shutdown (tasks finish), then a cold one
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM if len(stopping) == 1 else signal.SIGQUIT)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deaths: list[float] = []
    code = 0
    while any(p.poll() is None for p in children.values()) or not stopping:
        time.sleep(0.5)
        if stopping:
            continue
        for spec, proc in list(children.items()):
            if proc.poll() is None:
                continue
            now = time.monotonic()
            deaths[:] = [t for t in deaths if now - t < 60] + [now]
            if len(deaths) > RESTARTS_PER_MINUTE:
                log.error("%s exited %s; too many restarts, stopping", spec.hostname, proc.returncode)
                code = 1
                stop(signal.SIGTERM, None)
                break
            log.warning("%s exited %s; restarting it", spec.hostname, proc.returncode)
            children[spec] = spawn(spec)
    return code
