"""Ingest benchmark: the real Celery pipeline against its floor, measured in one run.

    python bench/ingest.py                         # 60 documents, replay cassette, zero LLM latency
    python bench/ingest.py --llm-latency 0.5       # simulated provider latency L per call
    python bench/ingest.py --docs 100 --workers 2 --llm-concurrency 4
    python bench/ingest.py --llm-latency 1 --llm-concurrency 1 --llm-threads 8   # llm queue on its own pool

pipeline: documents through remember → classify → chunk → extract → embed_and_load on real
worker processes (Redis broker, Postgres + pgvector), LLM answered from a cassette.
floor:    the same texts embedded in one process and the same rows bulk-written, no Celery.
Figures go to stdout and bench/results/ingest-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))


def build_cassette(docs: list[tuple[str, str]], max_chunk_tokens: int, latency: float, path: Path) -> int:
    """Record a cassette: one entry per chunk the pipeline will make, answered by the offline extractor."""
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.pipelines.cognify.chunk import chunk_text

    entries = []
    for _name, text in docs:
        for chunk in chunk_text(text, max_chunk_tokens):
            entry = {"contains": chunk.text, "response_model": "ChunkExtraction",
                     "response": offline_chunk_extraction(chunk.text).model_dump()}
            if latency:
                entry["delay_seconds"] = latency
            entries.append(entry)
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    return len(entries)


def run_pipeline(app, docs, dataset: str, workers: int, timeout: float = 3600) -> dict:
    from engram.tasks.client import EngramClient

    client = EngramClient(app, timeout=300, local_reads=True)
    started = time.perf_counter()
    handle = client.remember(dataset=dataset, items=[{"text": t, "name": n} for n, t in docs])
    statuses = handle.wait(timeout=timeout, poll=0.25)
    wall = time.perf_counter() - started
    failed = [s for s in statuses if s.status != "completed"]
    if failed:
        raise SystemExit(f"{len(failed)} runs failed, first: {failed[0].error}")
    calls = sum(s.llm_calls for s in statuses)
    return {"wall_s": wall, "docs_per_s": len(docs) / wall, "llm_calls": calls}


def run_floor(docs, dataset: str, settings) -> dict:
    """Embed the same texts and bulk-write the same rows, in this process, without Celery."""
    from engram.adapters.embed import get_embedder
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.adapters.store import Store
    from engram.pipelines import ids
    from engram.pipelines.cognify.chunk import chunk_text
    from engram.pipelines.cognify.extract import build_graph

    embedder = get_embedder(settings)
    embedder.embed(["warm up"])
    store = Store()
    with store.unit_of_work() as uow:
        dataset_id = uow.access.create_dataset("bench", dataset)
    prepared = []
    for name, text in docs:  # cassette lookups cost nothing in the floor: precompute extractions
        chunks = chunk_text(text, settings.max_chunk_tokens)
        prepared.append((name, text, chunks, [offline_chunk_extraction(c.text) for c in chunks]))
    started = time.perf_counter()
    keyed_all, loads = [], []
    for name, text, chunks, extractions in prepared:
        with store.unit_of_work() as uow:
            item, _ = uow.graph.add_item(dataset_id, ids.content_hash(text.encode()), text, name=name, mime=None,
                                         source=None)
        document = ids.document_id(item)
        rows = [{"id": ids.chunk_id(document, c.index), "index": c.index, "text": c.text,
                 "token_count": c.token_count, "cut_type": c.cut_type} for c in chunks]
        draft = build_graph(dataset_id, [(r["id"], r["text"]) for r in rows], extractions)
        keyed = [(r["id"], r["text"]) for r in rows] + [(s.id, s.text) for s in draft.summaries]
        keyed += [(e.id, e.name) for e in draft.entities] + [(t.id, t.name) for t in draft.entity_types]
        keyed += [(e.id, e.edge_text) for e in draft.edges]
        keyed_all.append(keyed)
        loads.append((item, document, rows, draft))
    flat = [t for keyed in keyed_all for _, t in keyed]
    vectors_flat = embedder.embed(flat)
    embedded = time.perf_counter()
    position = 0
    with store.unit_of_work() as uow:
        for keyed, (item, document, rows, draft) in zip(keyed_all, loads):
            vectors = {k: vectors_flat[position + i] for i, (k, _) in enumerate(keyed)}
            position += len(keyed)
            uow.graph.load_document(dataset=dataset_id, item=item, document=document, doc_type="text",
                                    title=None, chunk_rows=rows, draft=draft, vectors=vectors)
    wall = time.perf_counter() - started
    return {"wall_s": wall, "docs_per_s": len(docs) / wall, "embed_s": embedded - started,
            "write_s": time.perf_counter() - embedded, "texts_embedded": len(flat)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (celery --concurrency)")
    parser.add_argument("--llm-latency", type=float, default=0.0, help="simulated seconds per LLM call")
    parser.add_argument("--llm-concurrency", type=int, default=4, help="parallel LLM calls inside one task")
    parser.add_argument("--llm-threads", type=int, default=0,
                        help="serve the llm queue from a separate thread-pool worker of this many threads "
                             "(LLM waits then overlap embedding); 0 = one worker for every queue")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()

    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench").expanduser()))
    from make_bench_corpus import generate

    from engram.cli import prepare_services
    from engram.cli.demo import start_worker, stop_worker, wait_for_worker
    from engram.settings import get_settings, reset_settings

    prepare_services()
    reset_settings()
    settings = get_settings()
    args.out.mkdir(parents=True, exist_ok=True)
    docs = generate(args.docs)
    run_tag = uuid.uuid4().hex[:6]
    # Unique text per run, so content-hash dedupe never turns the benchmark into a no-op.
    docs = [(n, f"{t}\n\nBenchmark run {run_tag}.") for n, t in docs]
    warmup = [("warmup.txt", f"Warm up the worker models {run_tag}.")]
    cassette = args.out / f"cassette-{run_tag}.json"
    entries = build_cassette(docs, settings.max_chunk_tokens, args.llm_latency, cassette)
    build_cassette(docs + warmup, settings.max_chunk_tokens, args.llm_latency, cassette)

    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_LLM_CONCURRENCY": str(args.llm_concurrency)}
    os.environ.update(env)
    reset_settings()
    from engram.celery_app import create_app

    app = create_app()
    procs = []
    if args.llm_threads:
        others = [q for q in settings.queues if q != settings.queue_llm]
        procs.append(start_worker(concurrency=args.workers, extra_env=env, log_path=args.out / f"worker-{run_tag}.log",
                                  extra_args=(f"--queues={','.join(others)}",)))
        procs.append(start_worker(concurrency=args.llm_threads, extra_env=env,
                                  log_path=args.out / f"worker-llm-{run_tag}.log",
                                  extra_args=(f"--queues={settings.queue_llm}", "--pool=threads")))
    else:
        procs.append(start_worker(concurrency=args.workers, extra_env=env, log_path=args.out / f"worker-{run_tag}.log"))
    try:
        for proc in procs:
            wait_for_worker(app, proc)
        run_pipeline(app, warmup, f"bench-warmup-{run_tag}", args.workers)
        pipeline = run_pipeline(app, docs, f"bench-pipeline-{run_tag}", args.workers)
    finally:
        for proc in procs:
            stop_worker(proc)
    floor = run_floor(docs, f"bench-floor-{run_tag}", settings)
    slots = args.llm_threads * args.llm_concurrency if args.llm_threads else args.workers * args.llm_concurrency
    report = {
        "docs": len(docs), "chunks": entries, "workers": args.workers, "llm_latency_s": args.llm_latency,
        "llm_concurrency_per_task": args.llm_concurrency, "llm_threads": args.llm_threads,
        "pipeline": pipeline, "floor": floor,
        "ratio_pipeline_over_floor": pipeline["wall_s"] / floor["wall_s"],
    }
    if args.llm_latency:
        report["ideal_wall_s"] = pipeline["llm_calls"] * args.llm_latency / slots
        report["wall_over_ideal"] = pipeline["wall_s"] / report["ideal_wall_s"]
    out = args.out / f"ingest-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2))
    cassette.unlink(missing_ok=True)
    print(f"documents: {len(docs)}  chunks: {entries}  workers: {args.workers}  llm latency: {args.llm_latency}s")
    print(f"pipeline: {pipeline['wall_s']:.2f}s  {pipeline['docs_per_s']:.2f} docs/s  ({pipeline['llm_calls']} LLM calls)")
    print(f"floor:    {floor['wall_s']:.2f}s  {floor['docs_per_s']:.2f} docs/s  (embed {floor['embed_s']:.2f}s of "
          f"{floor['texts_embedded']} texts, write {floor['write_s']:.2f}s)")
    print(f"ratio pipeline/floor: {report['ratio_pipeline_over_floor']:.2f}")
    if args.llm_latency:
        print(f"wall vs ideal (calls*L/C, C={slots}): {pipeline['wall_s']:.2f}s vs {report['ideal_wall_s']:.2f}s "
              f"= {report['wall_over_ideal']:.2f}x")
    print(f"report: {out}")


if __name__ == "__main__":
    main()
