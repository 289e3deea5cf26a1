"""Explorer page latency on a 10,000-chunk dataset: p50/p95 of each page, as a browser asks it.

    python bench/explorer.py                       # 10,000 chunks, 30 requests per page
    python bench/explorer.py --requests 10         # a short run while developing
    python bench/explorer.py --no-worker           # use the worker already running (same Redis)

Issue #37: explorer pages answer <= 300 ms p95 on a 10,000-chunk dataset. The dataset
(`bench-explorer-<N>-s<seed>`, user `bench`) holds the demo corpus remembered as `engram demo`
does (a real graph: entities, facts, supersession, contradictions, runs) plus synthetic
documents up to N chunks of real-shaped text loaded by binary COPY (bench/latency_rows.py, as
bench/recall_latency.py loads them: BM25 postings, vectors, conversation chunks; no graph). A
dataset a completed load left is reused. The explorer runs in this process (Starlette's
TestClient, HTML as a browser asks) and reads through a real worker (its api thread pool), so
each figure includes the Celery round trips of the page's public tasks. Pages: datasets, the
dataset (documents page), runs, a demo document with its chunks and facts, a synthetic
document, the entity Harbor Dynamics with its graph, the recall playground on the default
route (questions rotate), captures, skills and lessons. Writes bench/results/explorer-<ts>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from latency_rows import Assembler, Loader, Vectors, text_pool  # noqa: E402 - beside this script
from recall_latency import commit, machine  # noqa: E402

USER = "bench"
LINE_MS = 300.0
QUESTIONS = ["Who is the CEO of Harbor Dynamics?", "When was Alder Bay University founded?",
             "What happened during the Great Flood of 2011?", "Who founded Harbor Dynamics?",
             "What does the Seabird drone do?", "Where is the Eastquay Technology Park?"]


def _dataset(name: str, size: int, seed: int, client) -> dict:
    """The demo corpus remembered into `name`, then synthetic documents up to `size` chunks."""
    from engram.adapters.embed import get_embedder
    from engram.adapters.store import Store
    from engram.adapters.store.engine import get_engine
    from engram.cli.demo import remember_demo, settle_demo
    from engram.pipelines.cognify.chunk import chunk_budget
    from engram.settings import get_settings

    settings = get_settings()
    loader = Loader(get_engine())
    with Store().unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, USER)
    marker = settings.state_dir / f"{name}.json"  # written when a load completed, with the dataset's id
    if dataset is not None and marker.exists() and json.loads(marker.read_text()).get("dataset") == str(dataset) \
            and loader.counts(dataset)["chunks"] >= size:
        return {"name": name, "reused": True, **json.loads(marker.read_text()), "rows": loader.counts(dataset)}
    started = time.perf_counter()
    statuses = remember_demo(client, dataset=name, user=USER).wait(timeout=3600)
    failed = [s for s in statuses if s.status != "completed"]
    if failed:
        raise SystemExit(f"{len(failed)} demo runs did not complete: {failed[0]}")
    settle_demo(client, dataset=name, user=USER)
    demo_s = time.perf_counter() - started
    with Store().unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, USER)
    missing = size - loader.counts(dataset)["chunks"]
    embedder = get_embedder(settings)
    limit, counter = chunk_budget(settings.max_chunk_tokens, embedder)
    documents = list(Assembler(text_pool(), limit, counter, seed).documents(missing))
    vectors = Vectors(embedder, settings.state_dir / "bench-explorer-pool")
    vectors.ensure([line for doc in documents for c in doc.chunks for line in c["lines"]])
    started = time.perf_counter()
    for first in range(0, len(documents), 200):
        loader.load(dataset, documents[first:first + 200], vectors, 1_000_000 + first, seed + first)
    loader.analyze()
    done = {"dataset": str(dataset), "demo_seconds": round(demo_s, 1), "copy_seconds": round(time.perf_counter() - started, 1),
            "loaded_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    marker.write_text(json.dumps(done))
    return {"name": name, "reused": False, **done, "rows": loader.counts(dataset)}


def _pages(web, name: str) -> dict[str, list[str]]:
    """page -> the paths asked in turn (the recall playground rotates its questions)."""
    from urllib.parse import quote

    docs = web.get(f"/d/{quote(name)}?offset=0", headers={"Accept": "application/json"}).json()["documents"]
    listed = {d["name"]: d["id"] for d in docs["items"]}
    page = 0
    while "05-harbor-dynamics-new-ceo-2024.md" not in listed and docs["next_offset"] is not None:
        page = docs["next_offset"]
        docs = web.get(f"/d/{quote(name)}?offset={page}", headers={"Accept": "application/json"}).json()["documents"]
        listed |= {d["name"]: d["id"] for d in docs["items"]}
    demo_doc = listed["05-harbor-dynamics-new-ceo-2024.md"]
    synthetic = next(i for n, i in listed.items() if not n.endswith(".md"))
    base = f"/d/{quote(name)}"
    return {"datasets": ["/"], "dataset": [base], "runs": [f"{base}/runs"],
            "document (demo)": [f"{base}/items/{demo_doc}"], "document (synthetic)": [f"{base}/items/{synthetic}"],
            "entity + graph": [f"{base}/entities/Harbor%20Dynamics"],
            "recall (default route)": [f"{base}/recall?q={quote(q)}&top_k=10" for q in QUESTIONS],
            "captures": [f"{base}/objects"], "skills": [f"{base}/skills"], "lessons": [f"{base}/sessions"]}


def _get(web, paths: list[str]):
    def ask(i: int) -> None:
        answer = web.get(paths[i % len(paths)])
        if answer.status_code != 200:
            raise SystemExit(f"{paths[i % len(paths)]}: {answer.status_code} {answer.text[:300]}")

    return ask


def _measure(ask, requests: int, warmup: int) -> dict:
    times = []
    for i in range(warmup + requests):
        started = time.perf_counter()
        ask(i)
        elapsed = (time.perf_counter() - started) * 1000
        if i >= warmup:
            times.append(elapsed)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * len(times))) - 1)]
    return {"p50_ms": round(statistics.median(times), 1), "p95_ms": round(p95, 1), "max_ms": round(times[-1], 1),
            "requests": len(times), "pass": p95 <= LINE_MS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000, help="chunks in the dataset")
    parser.add_argument("--requests", type=int, default=30, help="timed requests per page")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-worker", action="store_true", help="use a running worker instead of starting one")
    args = parser.parse_args()

    from engram.cli.app import prepare_services

    prepare_services()
    from starlette.testclient import TestClient

    from engram.celery_app import app
    from engram.cli.demo import start_worker, stop_worker, wait_for_worker
    from engram.cli.explorer import create_app
    from engram.tasks.client import EngramClient

    proc = None if args.no_worker else start_worker(concurrency=2)
    try:
        if proc is not None:
            wait_for_worker(app, proc, workers=2)
        client = EngramClient(app, timeout=120)
        deployment = _dataset(f"bench-explorer-{args.size}-s{args.seed}", args.size, args.seed, client)
        web = TestClient(create_app(client, {"bench-token": USER}))
        web.post("/login", data={"token": "bench-token"})
        figures = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
                   "deployment": deployment, "machine": machine(), "line_ms": LINE_MS, "pages": {}}
        print(f"{deployment['name']}: {deployment['rows']} ({'reused' if deployment['reused'] else 'loaded'})")
        name = deployment["name"]
        asks = {page: _get(web, paths) for page, paths in _pages(web, name).items()}
        # The recall task alone, same questions, no page: what of the playground's time is recall's.
        asks["(engram.recall alone)"] = lambda i: client.call(
            "engram.recall", question=QUESTIONS[i % len(QUESTIONS)], datasets=[name], user=USER, top_k=10)
        for page, ask in asks.items():
            f = figures["pages"][page] = _measure(ask, args.requests, args.warmup)
            print(f"  {page:24s} p50 {f['p50_ms']:7.1f} ms  p95 {f['p95_ms']:7.1f} ms  max {f['max_ms']:7.1f} ms  "
                  f"{'PASS' if f['pass'] else 'FAIL'} (<= {LINE_MS:.0f} ms)")
        figures["machine_after"] = machine()
        out = HERE / "results" / f"explorer-{time.strftime('%Y%m%d-%H%M%S')}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(figures, indent=1, default=str))
        print(f"written: {out}")
    finally:
        if proc is not None:
            stop_worker(proc)


if __name__ == "__main__":
    main()
