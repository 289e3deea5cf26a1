"""`engram worker`: a prefork pipeline worker plus a thread-pool worker for the api queue.

Stage work (classify, chunk, extract, embed) is CPU-bound and holds a process for seconds; the
public producer tasks (accept, status, recall) must answer in milliseconds however busy the
fleet is. So one `engram worker` runs two Celery workers under a small supervisor: the
pipeline queues on processes at a lower CPU priority, and the api queue on threads of its own.

The supervisor loads the local embedding model once and forks both workers from it (no exec):
the pipeline worker, its pool processes and the api worker all share that one copy of torch and
the weights, copy-on-write, so the whole tree holds the model once.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import signal
import sys
import time
import traceback
import uuid
from dataclasses import dataclass
from engram.adapters import metrics
from engram.adapters.embed import get_embedder
from engram.adapters.redis_client import reset_redis
from engram.adapters.store.engine import dispose_engine
from engram.settings import get_settings

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


def serve_metrics(settings, port: int):
    """Serve /metrics for this worker tree from this process (the supervisor, or the one worker):
    every process records into one directory under state_dir, emptied now, added up per scrape."""
    from engram.tasks.observe import fleet_gauges

    metrics.prepare_multiprocess(settings.state_dir / "metrics" / str(port))
    server = metrics.serve(port, settings.metrics_address, fleet_gauges())
    log.info("metrics on http://%s:%d/metrics", settings.metrics_address, port)
    return server


def run_one(spec: WorkerSpec, loglevel: str, extra: list[str]) -> None:
    """Run one Celery worker in this process (after the services are up: they keep our priority)."""
    from engram.celery_app import app

    if spec.nice:
        os.nice(spec.nice)
    settings = get_settings()
    if spec.pool == "threads":
        # A thread back from a query waits for the GIL up to one switch interval while a busy
        # thread (a recall ranking) holds it; an accept makes ~20 such waits. 5 ms -> 0.5 ms.
        sys.setswitchinterval(settings.api_switch_interval_seconds)
    if settings.queue_api in spec.queues and spec.pool == "threads" and settings.embedding_model.startswith("local:"):
        # The api worker's own query embedder, loaded before it consumes: no recall waits for it.
        get_embedder(settings).embed(["warm up the query embedder"])
    app.worker_main(spec.argv(loglevel, extra))


class ForkedWorker:
    """A worker forked from the supervisor: the part of Popen's interface the supervisor uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)


def own_scheduling_group(nice: int) -> None:
    """Make this forked child the leader of a session of its own, at `nice` as a group.

    Linux with autogroup scheduling (the default on desktop and many server kernels) shares the
    CPU between sessions first and by niceness only within one: niced pipeline processes in the
    terminal's session still take that session's share from the api worker beside them. In a
    session of their own at autogroup niceness `nice`, they yield the CPU to the api worker, to
    Postgres and to every other session. The supervisor forwards Ctrl-C and SIGTERM; should it die
    outright, the child is sent SIGTERM (a warm shutdown) rather than left consuming."""
    try:
        os.setsid()
    except OSError:
        return
    try:
        with open("/proc/self/autogroup", "w") as autogroup:  # absent without autogroup: nothing to do
            autogroup.write(str(nice))
    except OSError:
        pass
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):
        pass


PR_SET_PDEATHSIG = 1


def _fork_worker(spec: WorkerSpec, loglevel: str, extra: list[str]) -> ForkedWorker:
    pid = os.fork()
    if pid:
        return ForkedWorker(pid)
    code = 1
    try:  # the child: the supervisor's handlers are not ours; Celery installs its own
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if spec.nice:
            own_scheduling_group(spec.nice)
        run_one(spec, loglevel, extra)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - report, then leave without running the parent's cleanup
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def preload_shared(settings) -> bool:
    """What every worker needs, loaded once in the supervisor so the children share its pages:
    the task modules, and the local model (on one thread: no OpenMP pool exists at the fork)."""
    from engram.celery_app import app

    app.loader.import_default_modules()
    if not (settings.embed_preload and settings.embedding_model.startswith("local:")):
        return False

    get_embedder(settings).preload()
    return True


def supervise(specs: list[WorkerSpec], loglevel: str, extra: list[str]) -> int:
    """Run each spec as a forked child worker; restart one that dies; stop all on SIGTERM/SIGINT."""
    logging.basicConfig(level=loglevel.upper(), format="[%(asctime)s: %(levelname)s/engram worker] %(message)s")
    if preload_shared(get_settings()):
        log.info("embedding model loaded once; workers share it")
    dispose_engine()  # no connection of ours may be inherited by a child
    reset_redis()
    gc.collect()
    gc.freeze()  # the children's collections must not write to (and so copy) the shared objects

    def spawn(spec: WorkerSpec) -> ForkedWorker:
        log.info("starting %s on %s (%s x%d, nice %d)", spec.hostname, ",".join(spec.queues),
                 spec.pool or "prefork", spec.concurrency, spec.nice)
        return _fork_worker(spec, loglevel, extra)

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
