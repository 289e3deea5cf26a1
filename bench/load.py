"""Load benchmark: does the README's one-machine layout answer producers while its fleet is saturated?

    python bench/load.py                          # engram worker --concurrency 4, 40 calls a stream
    python bench/load.py --calls 60 --burst 500 --batch 10 --concurrency 4

The layout is the README's, started the README's way: `engram worker --concurrency 4` in its own
process group on a fresh ENGRAM_STATE_DIR (the worker starts the embedded Postgres and Redis
itself), and producers pointed at it by `engram services env`; offline extractor (no LLM), the
real local embedding model. Every stream is a process of its own with a bare Celery app (task
names only, as a producer without Engram), each call waited for (`.get()`, as the README does):

  recall  CHUNKS top 5 over the 24-document demo corpus, back to back
  status  one run's status, 0.05 s apart
  accept  a remember of --batch new documents, 0.5 s apart

idle:       recall and status together with nothing queued; then accept alone (the runs of
            its first calls start behind it: its later calls are not quite idle).
saturated:  --burst documents remembered at once (5 producers, batches of --batch) queue behind
            the busy pipeline processes; then the three streams together, each until --calls
            calls, while at least the queued runs printed are still waiting.
Printed: per stream and phase n, p50/p95/p99/max and a histogram, the saturated/idle ratio of
each percentile, the run backlog, the load average, and where the CPU went (CPU seconds and
run-queue wait, from /proc/<pid>/schedstat, of the api worker, the pipeline processes and
Postgres). JSON to bench/results/load-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
BUCKETS_MS = (25, 50, 75, 100, 150, 200, 300, 500)
PAUSE_S = {"recall": 0.0, "status": 0.05, "accept": 0.5}


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def distribution(ms: list[float]) -> dict:
    edges = (0, *BUCKETS_MS, float("inf"))
    hist = [sum(1 for v in ms if lo <= v < hi) for lo, hi in zip(edges, edges[1:])]
    return {"n": len(ms), "p50": pct(ms, 50), "p95": pct(ms, 95), "p99": pct(ms, 99),
            "max": max(ms) if ms else None, "hist": hist}


def stream(kind: str, url: str, calls: int, payload: dict, ready, go, out) -> None:
    """One producer process: a warm-up call, then `calls` timed calls once `go` is set."""
    from celery import Celery

    app = Celery(broker=url, backend=url)

    def call(n: int) -> tuple[float, float]:
        kwargs = dict(payload)
        if kind == "accept":
            tag = uuid.uuid4().hex[:8]
            kwargs["items"] = [{"text": f"Accept {tag}.{j}: Mira Okafor moved the Greyfen survey to Tuesday.",
                                "name": f"accept-{tag}-{j}.txt"} for j in range(payload["items"])]
        sent, started = time.time(), time.perf_counter()
        result = app.send_task(f"engram.{'remember' if kind == 'accept' else kind}", kwargs=kwargs)
        try:
            result.get(timeout=120)
        finally:
            result.forget()
        return sent, (time.perf_counter() - started) * 1000

    if kind != "accept":
        call(0)
    ready.set()
    go.wait()
    took = []
    for n in range(calls):
        took.append(call(n))
        time.sleep(PAUSE_S[kind])
    out.put((kind, took))


def run_streams(url: str, calls: int, payloads: dict[str, dict]) -> dict[str, list[tuple[float, float]]]:
    """{stream: [(wall clock sent, ms)]}: each stream in a process of its own, started together."""
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    procs = []
    for kind, payload in payloads.items():
        ready = ctx.Event()
        procs.append(ctx.Process(target=stream, args=(kind, url, calls, payload, ready, go, out), daemon=True))
        procs[-1].start()
        ready.wait(300)
    go.set()
    results = dict(out.get(timeout=1800) for _ in procs)
    for p in procs:
        p.join(30)
    return results


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        out += map(int, kids)
        todo += map(int, kids)
    return out


def schedstat(pids: list[int]) -> tuple[float, float]:
    """CPU seconds and run-queue wait seconds of every thread of `pids` so far."""
    cpu = wait = 0.0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*") if Path(f"/proc/{pid}").exists() else ():
            try:
                run, delay, _ = map(int, (task / "schedstat").read_text().split())
            except (OSError, ValueError):
                continue
            cpu, wait = cpu + run / 1e9, wait + delay / 1e9
    return cpu, wait


def process_groups(worker_pid: int, store) -> dict[str, list[int]]:
    """The api worker (niceness 0 under the supervisor), the pipeline processes (niced), and the
    Postgres backends serving each (by the `engram:<pid>` application name); other backends."""
    from sqlalchemy import text

    groups: dict[str, list[int]] = {"api": [], "pipeline": [], "pg-api": [], "pg-pipeline": [], "pg-other": []}
    owner = {}
    for pid in descendants(worker_pid):
        try:
            nice = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
        except (OSError, IndexError, ValueError):
            continue
        owner[f"engram:{pid}"] = "api" if nice == 0 else "pipeline"
        groups[owner[f"engram:{pid}"]].append(pid)
    with store.unit_of_work() as uow:
        rows = uow.conn.execute(text("SELECT pid, application_name FROM pg_stat_activity")).all()
    for pid, name in rows:
        groups[f"pg-{owner.get(name, 'other')}"].append(pid)
    return groups


class CpuMeter:
    """schedstat deltas per process group over a phase (a process seen only at the end counts
    from zero)."""

    def __init__(self, worker_pid: int, store):
        self.worker_pid, self.store = worker_pid, store

    def __enter__(self):
        self.started = time.perf_counter()
        groups = process_groups(self.worker_pid, self.store)
        self.before = {p: schedstat([p]) for pids in groups.values() for p in pids}
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.started
        self.result = {}
        for group, pids in process_groups(self.worker_pid, self.store).items():
            cpu = wait = 0.0
            for pid in pids:
                c1, w1 = schedstat([pid])
                c0, w0 = self.before.get(pid, (0.0, 0.0))
                cpu, wait = cpu + max(0.0, c1 - c0), wait + max(0.0, w1 - w0)
            self.result[group] = {"cpu_s": cpu, "runqueue_wait_s": wait, "processes": len(pids)}


def backlog(store) -> int:
    from sqlalchemy import text

    with store.unit_of_work() as uow:
        return uow.conn.execute(text("SELECT count(*) FROM pipeline_runs WHERE status IN ('pending', 'running')")
                                ).scalar_one()


def wait_idle(store, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while backlog(store) and time.monotonic() < deadline:
        time.sleep(1)


def burst(url: str, docs: list[tuple[str, str]], batch: int, producers: int = 5) -> None:
    from celery import Celery

    def produce(p: int) -> None:
        app = Celery(broker=url, backend=url)
        mine = docs[p::producers]
        for start in range(0, len(mine), batch):
            items = [{"text": t, "name": n} for n, t in mine[start:start + batch]]
            app.send_task("engram.remember", kwargs={"dataset": "load", "create_dataset": True,
                                                     "items": items}).get(timeout=120)

    threads = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def start_readme_worker(concurrency: int, log: Path) -> subprocess.Popen:
    """`engram worker --concurrency N` as the README starts it (it starts the embedded services)."""
    return subprocess.Popen([sys.executable, "-m", "engram.cli", "worker", "--concurrency", str(concurrency)],
                            start_new_session=True, stdout=open(log, "ab"), stderr=subprocess.STDOUT)


def services_env(proc: subprocess.Popen, log: Path) -> str:
    """The Redis URL `eval "$(engram services env)"` exports, asked as the README's producer
    terminal does once the worker is up."""
    deadline = time.monotonic() + 600
    while log.read_text(errors="replace").count(" ready.") < 2:  # the pipeline worker and the api worker
        if proc.poll() is not None or time.monotonic() > deadline:  # (a fresh state directory migrates once)
            raise SystemExit(f"engram worker exited {proc.returncode} or did not start; see {log}")
        time.sleep(1)
    while True:
        done = subprocess.run([sys.executable, "-m", "engram.cli", "services", "env"], capture_output=True, text=True)
        if done.returncode == 0:
            exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines() if "=" in line)
            return exports["ENGRAM_REDIS_URL"].strip("'\"")
        if time.monotonic() > deadline:
            raise SystemExit(f"engram services env failed: {done.stdout}{done.stderr}")
        time.sleep(2)


def stop_tree(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_REDIS_URL"}  # the embedded one: stop it too
    subprocess.run([sys.executable, "-m", "engram.cli", "services", "stop"], capture_output=True, timeout=120, env=env)


def table(report: dict) -> str:
    heads = [f"<{b}" for b in BUCKETS_MS] + [f">={BUCKETS_MS[-1]}"]
    lines = [f"{'stream':<8} {'phase':<10} {'n':>3} {'p50':>6} {'p95':>6} {'p99':>6} {'max':>6}   "
             + " ".join(f"{h:>5}" for h in heads) + "   (ms; histogram: calls per bucket)"]
    for kind in ("recall", "status", "accept"):
        for phase in ("idle", "saturated"):
            d = report[phase][kind]
            lines.append(f"{kind:<8} {phase:<10} {d['n']:>3} " + " ".join(f"{d[k]:>6.0f}" for k in
                         ("p50", "p95", "p99", "max")) + "   " + " ".join(f"{c:>5}" for c in d["hist"]))
        r = report["ratio"][kind]
        lines.append(f"{kind:<8} {'sat/idle':<10} {'':>3} " + " ".join(f"{r[k]:>6.2f}" for k in
                     ("p50", "p95", "p99", "max")))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=4, help="engram worker --concurrency (README: 4)")
    parser.add_argument("--calls", type=int, default=40, help="timed calls per stream and phase (30+)")
    parser.add_argument("--burst", type=int, default=500, help="documents queued before the saturated phase")
    parser.add_argument("--batch", type=int, default=10, help="documents per remember")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()

    state = Path(tempfile.mkdtemp(prefix="fleet-load-", dir="/tmp"))
    os.environ["ENGRAM_STATE_DIR"] = str(state)
    for name in ("ENGRAM_DATABASE_URL", "ENGRAM_REDIS_URL", "ENGRAM_BROKER_URL", "ENGRAM_LLM_MODEL"):
        os.environ.pop(name, None)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = time.strftime("%Y%m%d-%H%M%S")
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    report: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
                    "command": f"engram worker --concurrency {args.concurrency}", "cores": os.cpu_count(),
                    "calls": args.calls, "burst": args.burst, "batch": args.batch, "loadavg": {}}
    log = args.out / f"load-worker-{tag}.log"
    proc = start_readme_worker(args.concurrency, log)
    try:
        url = os.environ["ENGRAM_REDIS_URL"] = services_env(proc, log)
        from make_bench_corpus import generate

        from engram.adapters.store import Store
        from engram.cli.demo import DEMO_CORPUS, DEMO_QA, wait_for_worker
        from engram.celery_app import create_app
        from engram.tasks.client import EngramClient

        app = create_app()
        wait_for_worker(app, proc, timeout=300, workers=2)
        store = Store()
        seed = EngramClient(app, timeout=600).remember(dataset="seed", paths=[DEMO_CORPUS])
        seed.wait(timeout=900)
        wait_idle(store, 600)
        question = json.loads(DEMO_QA.read_text().splitlines()[0])["question"]
        payloads = {"recall": {"question": question, "datasets": ["seed"], "search_type": "CHUNKS", "top_k": 5},
                    "status": {"run_id": str(seed.runs[0].run_id)},
                    "accept": {"dataset": "load", "create_dataset": True, "items": args.batch}}
        report["loadavg"]["idle_start"] = os.getloadavg()
        with CpuMeter(proc.pid, store) as idle_cpu:
            idle = run_streams(url, args.calls, {k: payloads[k] for k in ("recall", "status")})
        idle |= run_streams(url, args.calls, {"accept": payloads["accept"]})  # its runs join the backlog

        docs, n = [], 7
        while len(docs) < args.burst:  # the generator makes at most 300 per seed
            docs += generate(min(300, args.burst - len(docs)), seed=n)
            n += 1
        unique = uuid.uuid4().hex[:6]  # fresh content every run: content-hash dedupe never makes it a no-op
        burst(url, [(name, f"{text}\n\nLoad run {unique}.") for name, text in docs], args.batch)
        report["backlog_before"] = backlog(store)
        time.sleep(5)  # every pipeline process busy
        report["loadavg"]["saturated_start"] = os.getloadavg()
        with CpuMeter(proc.pid, store) as sat_cpu:
            saturated = run_streams(url, args.calls, payloads)
        report["loadavg"]["saturated_end"] = os.getloadavg()
        report["backlog_after"] = backlog(store)
    finally:
        stop_tree(proc)
        shutil.rmtree(state, ignore_errors=True)

    for phase, got in (("idle", idle), ("saturated", saturated)):
        report[phase] = {kind: distribution([ms for _, ms in calls]) for kind, calls in got.items()}
    report["ratio"] = {k: {p: report["saturated"][k][p] / report["idle"][k][p] for p in ("p50", "p95", "p99", "max")}
                       for k in ("recall", "status", "accept")}
    report["cpu"] = {"idle": {"seconds": idle_cpu.seconds, **idle_cpu.result},
                     "saturated": {"seconds": sat_cpu.seconds, **sat_cpu.result}}
    report["raw_ms"] = {"idle": idle, "saturated": saturated}
    out = args.out / f"load-{tag}.json"
    out.write_text(json.dumps(report, indent=2, default=str))
    la = report["loadavg"]
    print(f"{report['date']} commit {commit}: `{report['command']}`, {report['cores']} cores, {args.calls} calls "
          f"a stream; load average {la['idle_start'][0]:.2f} idle, {la['saturated_start'][0]:.2f} -> "
          f"{la['saturated_end'][0]:.2f} saturated; backlog {report['backlog_before']} runs queued before, "
          f"{report['backlog_after']} after the saturated phase")
    print(table(report))
    for phase in ("idle", "saturated"):
        cpu = report["cpu"][phase]
        print(f"cpu {phase} ({cpu['seconds']:.0f} s): " + ", ".join(
            f"{g} {v['cpu_s']:.1f} s cpu / {v['runqueue_wait_s']:.1f} s run-queue wait ({v['processes']} proc)"
            for g, v in cpu.items() if isinstance(v, dict)))
    verdict = (report["ratio"]["recall"]["p95"] <= 2 and report["saturated"]["accept"]["p95"] <= 100
               and report["saturated"]["status"]["p95"] <= 100)
    print(f"{'PASS' if verdict else 'FAIL'}: recall p95 ratio {report['ratio']['recall']['p95']:.2f} (<= 2), "
          f"accept p95 {report['saturated']['accept']['p95']:.0f} ms, status p95 "
          f"{report['saturated']['status']['p95']:.0f} ms (<= 100) under saturation")
    print(f"report: {out}")


if __name__ == "__main__":
    main()
