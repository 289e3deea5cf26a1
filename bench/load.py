"""Load benchmark: is the producer API responsive while the fleet is saturated?

    python bench/load.py                                  # 5 producers x 100 documents, 2 recall clients
    python bench/load.py --producers 5 --docs 100 --batch 10 --recallers 2 --workers 2 --load-seconds 60

One `engram worker --concurrency W` (W pipeline processes + the api thread pool) on fresh embedded
Postgres and Redis, offline extractor (no LLM latency), the real local embedding model.

idle: Q recall clients and one status client for --idle-seconds with nothing queued; then
      accepts of --batch documents, one at a time (the fleet then drains them).
burst: P producer threads send P x M documents as remembers of --batch items each, every one
      waited for (`.get()`, as the README snippet does), through a bare Celery app (task names
      only, as a producer without Engram would), with no pause: the api's accept capacity.
load: then, with that backlog queued and every pipeline process busy, one producer remembers a
      batch at a time (each waited for, 0.5 s apart) for 0.8 x --load-seconds: the accept latency
      a producer sees while the fleet is saturated. The same Q recall clients and the status
      client run from the burst to the end of --load-seconds. The README producer snippet is run
      verbatim once under that load.
Reported: accept latency p50/p95/max (burst and load), status and recall p50/p95 idle vs load (and their ratio),
the back-pressure answers seen, and pipeline throughput during the load window.
Figures go to stdout and bench/results/load-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
README = HERE.parent / "README.md"


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def summary(values: list[float]) -> dict:
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "p50_ms": pct(ms, 50), "p95_ms": pct(ms, 95), "max_ms": max(ms) if ms else None,
            "mean_ms": statistics.fmean(ms) if ms else None}


def producer_app(url: str):
    from celery import Celery

    return Celery(broker=url, backend=url)  # one per thread: a result consumer is not thread-safe


def timed(app, name: str, kwargs: dict, timeout: float = 120) -> tuple[float, dict]:
    started = time.perf_counter()
    result = app.send_task(name, kwargs=kwargs)
    try:
        value = result.get(timeout=timeout)
    finally:
        result.forget()
    return time.perf_counter() - started, value


class Clients:
    """Q recall clients and one status client, looping until stopped; latencies per phase."""

    def __init__(self, url: str, recallers: int, questions: list[str], dataset: str, run_ids: list[str]):
        self.url, self.recallers, self.questions, self.dataset, self.run_ids = url, recallers, questions, dataset, run_ids
        self.recall: list[float] = []
        self.status: list[float] = []
        self.errors: list[str] = []

    def run(self, seconds: float | None = None, until: threading.Event | None = None) -> None:
        stop = threading.Event()
        threads = [threading.Thread(target=self._recall_loop, args=(i, stop)) for i in range(self.recallers)]
        threads.append(threading.Thread(target=self._status_loop, args=(stop,)))
        for t in threads:
            t.start()
        if until is not None:
            until.wait()
        if seconds:
            time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join()

    def _recall_loop(self, i: int, stop: threading.Event) -> None:
        app, n = producer_app(self.url), i
        while not stop.is_set():
            question = self.questions[n % len(self.questions)]
            n += self.recallers
            try:
                took, _ = timed(app, "engram.recall", {"question": question, "datasets": [self.dataset],
                                                       "search_type": "CHUNKS", "top_k": 5})
                self.recall.append(took)
            except Exception as exc:
                self.errors.append(f"recall: {exc}")

    def _status_loop(self, stop: threading.Event) -> None:
        app, n = producer_app(self.url), 0
        while not stop.is_set():
            try:
                took, _ = timed(app, "engram.status", {"run_id": self.run_ids[n % len(self.run_ids)]})
                self.status.append(took)
            except Exception as exc:
                self.errors.append(f"status: {exc}")
            n += 1
            time.sleep(0.05)


def open_runs(store) -> int:
    from sqlalchemy import text

    with store.unit_of_work() as uow:
        return uow.conn.execute(text("SELECT count(*) FROM pipeline_runs WHERE status IN ('pending', 'running')")
                                ).scalar_one()


def finished_runs(store) -> int:
    from sqlalchemy import text

    with store.unit_of_work() as uow:
        return uow.conn.execute(text("SELECT count(*) FROM pipeline_runs WHERE status IN ('completed', 'failed')")
                                ).scalar_one()


def wait_idle(store, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while open_runs(store) and time.monotonic() < deadline:
        time.sleep(1)


def run_readme_snippet(url: str) -> dict:
    section = README.read_text().split("\n## Producers", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", "-c", code], env={"PATH": "/usr/bin:/bin", "ENGRAM_REDIS_URL": url},
                          capture_output=True, text=True, timeout=300, cwd=tempfile.gettempdir())
    return {"ok": done.returncode == 0, "wall_s": time.perf_counter() - started,
            "output": (done.stdout if done.returncode == 0 else done.stderr)[-500:].strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--producers", type=int, default=5, help="P producer threads")
    parser.add_argument("--docs", type=int, default=100, help="M documents per producer")
    parser.add_argument("--batch", type=int, default=10, help="documents per remember")
    parser.add_argument("--recallers", type=int, default=2, help="Q concurrent recall clients")
    parser.add_argument("--workers", type=int, default=2, help="pipeline processes (engram worker --concurrency)")
    parser.add_argument("--api-threads", type=int, default=None, help="api thread pool (default ENGRAM_API_THREADS)")
    parser.add_argument("--idle-seconds", type=float, default=30)
    parser.add_argument("--idle-accepts", type=int, default=20)
    parser.add_argument("--load-seconds", type=float, default=60, help="clients keep going this long after the last accept")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()

    state = Path(tempfile.mkdtemp(prefix="engram-load-", dir="/tmp"))
    os.environ["ENGRAM_STATE_DIR"] = str(state)
    for name in ("ENGRAM_DATABASE_URL", "ENGRAM_REDIS_URL", "ENGRAM_LLM_MODEL"):
        os.environ.pop(name, None)
    from make_bench_corpus import generate

    from engram.adapters.services import stop_embedded_postgres, stop_embedded_redis
    from engram.adapters.store import Store
    from engram.celery_app import create_app
    from engram.cli.app import prepare_services
    from engram.cli.demo import DEMO_CORPUS, DEMO_QA, start_worker, stop_worker
    from engram.settings import get_settings, reset_settings
    from engram.tasks.client import EngramClient

    urls = prepare_services()
    reset_settings()
    settings = get_settings()
    args.out.mkdir(parents=True, exist_ok=True)
    tag = time.strftime("%Y%m%d-%H%M%S")
    app = create_app()
    extra = (f"--api-threads={args.api_threads}",) if args.api_threads is not None else ()
    proc = start_worker(concurrency=args.workers, loglevel="warning", log_path=args.out / f"load-worker-{tag}.log",
                        extra_args=extra)
    store = Store()
    report: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "load_average_at_start": os.getloadavg()[0], "producers": args.producers,
                    "docs_per_producer": args.docs, "batch": args.batch, "recallers": args.recallers,
                    "pipeline_processes": args.workers, "api_threads": args.api_threads or settings.api_threads,
                    "cores": os.cpu_count()}
    try:
        deadline = time.monotonic() + 180
        while len(app.control.ping(timeout=1) or []) < 2:  # the pipeline worker and the api worker
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the worker did not start; see its log in bench/results")
        client = EngramClient(app, timeout=600, local_reads=True)
        seed = client.remember(dataset="seed", paths=[DEMO_CORPUS])
        seed.wait(timeout=900)
        questions = [json.loads(line)["question"] for line in DEMO_QA.read_text().splitlines()
                     if line.strip()]
        run_ids = [str(r.run_id) for r in seed.runs]
        cold_app = producer_app(urls.redis_url)
        report["recall_cold_ms"] = timed(cold_app, "engram.recall", {"question": questions[0], "datasets": ["seed"],
                                                                      "search_type": "CHUNKS"})[0] * 1000

        idle = Clients(urls.redis_url, args.recallers, questions, "seed", run_ids)
        idle.run(seconds=args.idle_seconds)
        accept_idle = []
        for i in range(args.idle_accepts):  # the same batch size as under load
            items = [{"text": f"Idle accept {i}.{j} {uuid.uuid4()}."} for j in range(args.batch)]
            took, _ = timed(cold_app, "engram.remember", {"dataset": "idle", "create_dataset": True, "items": items})
            accept_idle.append(took)
        wait_idle(store, 600)

        docs, seed = [], 7
        while len(docs) < args.producers * args.docs:  # the generator makes at most 300 per seed
            docs += generate(min(300, args.producers * args.docs - len(docs)), seed=seed)
            seed += 1
        unique = uuid.uuid4().hex[:6]  # fresh content every run: content-hash dedupe never makes it a no-op
        docs = [(n, f"{t}\n\nLoad run {unique}.") for n, t in docs]
        accepts: list[float] = []
        answers: list[dict] = []
        errors: list[str] = []
        all_accepted = threading.Event()

        def produce(p: int) -> None:
            papp = producer_app(urls.redis_url)
            mine = docs[p * args.docs:(p + 1) * args.docs]
            for start in range(0, len(mine), args.batch):
                items = [{"text": t, "name": n} for n, t in mine[start:start + args.batch]]
                try:
                    took, answer = timed(papp, "engram.remember", {"dataset": "load", "create_dataset": True,
                                                                  "items": items}, timeout=60)
                    accepts.append(took)
                    answers.append({k: answer.get(k) for k in ("queued_ahead", "eta_s")})
                except Exception as exc:
                    errors.append(f"remember: {exc}")

        load = Clients(urls.redis_url, args.recallers, questions, "seed", run_ids)
        finished_before = finished_runs(store)
        load_started = time.perf_counter()
        producers = [threading.Thread(target=produce, args=(p,)) for p in range(args.producers)]
        clients = threading.Thread(target=load.run, kwargs={"seconds": args.load_seconds, "until": all_accepted})
        clients.start()
        for t in producers:
            t.start()
        for t in producers:
            t.join()
        accept_wall = time.perf_counter() - load_started
        queued_after_accepts = open_runs(store)
        # Steady: with the backlog queued and every pipeline process busy, one producer remembers
        # a batch at a time, each waited for (the README's way), while the clients keep going.
        steady: list[float] = []
        steady_backlog: list[int] = []
        sapp = producer_app(urls.redis_url)
        steady_until = time.perf_counter() + args.load_seconds * 0.8
        n = 0
        while time.perf_counter() < steady_until:
            steady_backlog.append(open_runs(store))
            items = [{"text": f"Steady accept {unique}.{n}.{j}: the fleet is busy.", "name": f"steady-{n}-{j}"}
                     for j in range(args.batch)]
            try:
                took, _ = timed(sapp, "engram.remember", {"dataset": "load", "items": items}, timeout=60)
                steady.append(took)
            except Exception as exc:
                errors.append(f"remember (steady): {exc}")
            n += 1
            time.sleep(0.5)
        all_accepted.set()
        snippet = run_readme_snippet(urls.redis_url)
        clients.join()
        window = time.perf_counter() - load_started
        done_in_window = finished_runs(store) - finished_before
        queued_at_end = open_runs(store)

        report.update({
            "recall_idle": summary(idle.recall), "status_idle": summary(idle.status),
            "accept_idle": summary(accept_idle),
            "accept_load": summary(accepts), "accept_steady": summary(steady),
            "steady_backlog_min": min(steady_backlog, default=None), "status_load": summary(load.status), "recall_load": summary(load.recall),
            "accept_wall_s": accept_wall, "documents": len(docs), "remembers": len(accepts),
            "queued_after_accepts": queued_after_accepts, "queued_at_end": queued_at_end,
            "backpressure_answers": sum(1 for a in answers if a.get("queued_ahead") is not None),
            "max_queued_ahead": max((a["queued_ahead"] for a in answers if a.get("queued_ahead") is not None),
                                    default=None),
            "last_eta_s": next((a["eta_s"] for a in reversed(answers) if a.get("eta_s") is not None), None),
            "load_window_s": window, "runs_finished_in_window": done_in_window,
            "throughput_docs_per_s": done_in_window / window, "readme_snippet_under_load": snippet,
            "errors": (errors + idle.errors + load.errors)[:20],
        })
        for kind in ("recall", "status"):
            idle_p95, load_p95 = report[f"{kind}_idle"]["p95_ms"], report[f"{kind}_load"]["p95_ms"]
            report[f"{kind}_p95_load_over_idle"] = load_p95 / idle_p95 if idle_p95 and load_p95 else None
    finally:
        import gc

        gc.collect()  # result handles unsubscribe while Redis still runs, not at interpreter exit
        stop_worker(proc)
        stop_embedded_postgres(settings)
        stop_embedded_redis(settings)
        shutil.rmtree(state, ignore_errors=True)

    out = args.out / f"load-{tag}.json"
    out.write_text(json.dumps(report, indent=2, default=str))
    f = lambda s: f"p50 {s['p50_ms']:.1f} ms  p95 {s['p95_ms']:.1f} ms  max {s['max_ms']:.1f} ms  (n={s['n']})"  # noqa: E731
    print(f"{report['date']}: {args.producers} producers x {args.docs} docs (batches of {args.batch}), "
          f"{args.recallers} recall clients, {args.workers} pipeline processes + {report['api_threads']} api threads, "
          f"{report['cores']} cores, load average {report['load_average_at_start']:.1f} at start")
    print(f"accept idle:  {f(report['accept_idle'])}")
    print(f"accept burst: {f(report['accept_load'])}   all {len(docs)} accepted in {accept_wall:.1f}s "
          f"({len(docs) / accept_wall:.0f} docs/s; {args.producers} producers at once, no pause)")
    print(f"accept load:  {f(report['accept_steady'])}   one producer, each waited for, while "
          f">= {report['steady_backlog_min']} runs were queued behind the busy pipeline")
    print(f"status idle:  {f(report['status_idle'])}")
    print(f"status load:  {f(report['status_load'])}   p95 ratio {report['status_p95_load_over_idle'] or 0:.2f}")
    print(f"recall idle:  {f(report['recall_idle'])}   (cold first recall {report['recall_cold_ms']:.0f} ms)")
    print(f"recall load:  {f(report['recall_load'])}   p95 ratio {report['recall_p95_load_over_idle'] or 0:.2f}")
    print(f"queued: {queued_after_accepts} runs after the last accept, {queued_at_end} at the end of the "
          f"{window:.0f}s window; back-pressure answers {report['backpressure_answers']} "
          f"(max queued_ahead {report['max_queued_ahead']}, last eta_s {report['last_eta_s']})")
    print(f"throughput: {done_in_window} runs finished in the window = {report['throughput_docs_per_s']:.2f} docs/s")
    print(f"README snippet under load: {'ok' if snippet['ok'] else 'FAILED'} in {snippet['wall_s']:.2f}s: "
          f"{snippet['output']}")
    if report["errors"]:
        print(f"errors: {report['errors']}")
    print(f"report: {out}")


if __name__ == "__main__":
    main()
