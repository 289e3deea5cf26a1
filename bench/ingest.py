"""Ingest benchmark: the real Celery pipeline against its floor, measured in one run.

    python bench/ingest.py                          # 50 + 50 documents, 2 worker processes, replay LLM
    python bench/ingest.py --llm-latency 1 --llm-threads 16   # simulated provider latency, llm thread pool
    python bench/ingest.py --scale 100,500,1000     # one ingest of 1,000 documents: docs/s at each count
    python bench/ingest.py --full-docs              # the generator's multi-chunk profiles, not one chunk each

pipeline: `engram worker` is launched, then a cold set of documents (first ingest after the
          worker starts), then a warm set (other documents, same worker) go through
          remember → classify → chunk → extract → embed_and_load (Redis broker, Postgres +
          pgvector, LLM answered from a cassette).
floor:    in this process, the same model on every core: each unique text embedded once (a
          text an earlier set already had is not embedded again), timed both as N forks on one
          torch thread each and as one process on N threads, the faster counting; then the same
          rows written through the same load, no Celery. Cold adds the model load (import +
          weights) to the floor, as the pipeline's cold wall includes it.
rounds:   `--rounds N` runs N warm sets (other documents each), and each set's floor right after
          its pipeline run, with the worker idle in between (the memory sampler paused): the
          machine's speed drifts over minutes, so a pipeline run and its floor measured seconds
          apart pair up. The report gives each set's ratio and the median over the warm sets.
sweep:    the vector index sweep is sent as beat sends it, every ENGRAM_VECTOR_INDEX_SWEEP_SECONDS
          (--sweep overrides, 0 = never): a dataset past 2,000 rows gets its own HNSW graphs, as in
          a fleet, and the run's later rows are written into them too.
speed:    one torch thread's forward of a short text and of a 256-token chunk, right after the
          first set and at the end: this host's speed drifts up to 3x over hours, so runs compare
          only alongside their probes. `--scale` also prints, per stretch between checkpoints,
          documents/s and each stage's mean task seconds (a cost growing with the dataset shows).
memory:   the worker process tree sampled every 0.2 s: summed RSS (counts pages shared by the
          forked pool once per process) and summed PSS (shared pages split: the real total).
Figures go to stdout and bench/results/ingest-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

from ingest_counts import embedded_counter, interval_costs, own_indexes, stored_keys, stored_vectors
from ingest_floor import FloorProcess, prepare_floor, speed_probe, unique_texts
from process_stats import TreeMemory, cpu_by_command, cpu_delta

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))


def build_cassette(docs: list[tuple[str, str]], settings, latency: float, path: Path) -> int:
    """Record a cassette: one entry per chunk the pipeline will make, answered by the offline extractor."""
    from engram.adapters.embed import get_embedder
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.pipelines.cognify.chunk import chunk_for_embedder

    entries = []
    embedder = get_embedder(settings)
    for _name, text in docs:
        for chunk in chunk_for_embedder(text, settings.max_chunk_tokens, embedder):
            entry = {"contains": chunk.text, "response_model": "ChunkExtraction",
                     "response": offline_chunk_extraction(chunk.text).model_dump()}
            if latency:
                entry["delay_seconds"] = latency
            entries.append(entry)
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    return len(entries)


# ------------------------------------------------------------------ pipeline


ACCEPT_BATCH = 500  # documents per remember: larger sets go as several accepts, back to back


def run_pipeline(app, docs, dataset: str, timeout: float = 7200, checkpoints: tuple[int, ...] = (),
                 sweep: float = 0.0) -> dict:
    from sqlalchemy import text

    from engram.beat_schedule import beat_schedule
    from engram.adapters.store import Store
    from engram.pipelines.cognify.flow import EMBED_AND_LOAD
    from engram.settings import get_settings
    from engram.tasks.client import EngramClient

    client = EngramClient(app, timeout=600, local_reads=True)
    store = Store()
    embedded_before, stored_before = embedded_counter(), stored_vectors()
    started_at = time.time()  # the runs' finished_at (the workers' clock, this host's) is compared with it
    started = time.perf_counter()
    run_ids = []
    for at in range(0, len(docs), ACCEPT_BATCH):  # a remember takes at most 1,000 items (models/payloads)
        handle = client.remember(dataset=dataset, items=[{"text": t, "name": n} for n, t in docs[at:at + ACCEPT_BATCH]])
        run_ids += [r.run_id for r in handle.runs]
    accepted = time.perf_counter() - started
    # The vector index sweep as beat sends it (its entry's task and options) every `sweep` seconds:
    # past 2,000 rows the dataset gets its own graphs, which every later row is written into.
    entry = beat_schedule(get_settings())["vector-indexes"]
    sweeps, swept_at = 0, started
    while True:  # only to learn that all are done: the times come from the runs' own rows
        if sweep and time.perf_counter() - swept_at >= sweep:
            app.send_task(entry["task"], **entry["options"])
            sweeps, swept_at = sweeps + 1, time.perf_counter()
        with store.unit_of_work() as uow:
            done = uow.conn.execute(text("SELECT count(*) FROM pipeline_runs WHERE id = ANY(:r)"
                                         " AND status IN ('completed', 'failed')"), {"r": run_ids}).scalar_one()
        if done == len(run_ids):
            break
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"only {done} of {len(run_ids)} runs finished in {timeout}s")
        time.sleep(0.25)
    with store.unit_of_work() as uow:
        finished = [f.timestamp() - started_at for f in uow.conn.execute(text(
            "SELECT finished_at FROM pipeline_runs WHERE id = ANY(:r) ORDER BY finished_at"), {"r": run_ids}).scalars()]
        row = uow.conn.execute(text(
            "SELECT count(*) FILTER (WHERE r.status = 'failed'), min(r.error), sum(r.llm_calls),"
            " sum((s.output->'embedding'->>'embedded')::int), sum((s.output->'embedding'->>'texts')::int),"
            " sum((s.output->'embedding'->>'batches')::int)"
            " FROM pipeline_runs r LEFT JOIN stage_runs s ON s.run_id = r.id AND s.stage = :stage"
            " WHERE r.id = ANY(:r)"), {"r": run_ids, "stage": EMBED_AND_LOAD.name}).one()
    if row[0]:
        raise SystemExit(f"{row[0]} runs failed, e.g. {row[1]}")
    wall = finished[-1]
    reached = {mark: finished[mark - 1] for mark in checkpoints if mark <= len(finished)}
    time.sleep(0.5)  # a batch task counts its texts just after storing them
    out = {"wall_s": round(wall, 3), "accept_s": round(accepted, 3), "docs_per_s": round(len(docs) / wall, 3),
           "llm_calls": int(row[2] or 0),
           "texts": int(row[4] or 0), "texts_embedded": embedded_counter() - embedded_before,
           "vectors_stored": stored_vectors() - stored_before,
           "embedded_in_embed_and_load": int(row[3] or 0), "batches_in_embed_and_load": int(row[5] or 0),
           "sweeps_sent": sweeps, "own_indexes": own_indexes(dataset)}
    if checkpoints:
        out["checkpoints"] = {str(k): {"s": round(v, 3), "docs_per_s": round(k / v, 3)} for k, v in sorted(reached.items())}
        out["intervals"] = interval_costs(run_ids, sorted(reached.items()))
    return out


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=50, help="documents in each of the cold and warm sets")
    parser.add_argument("--rounds", type=int, default=1,
                        help="warm sets, each followed by its floor (the median ratio is reported)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (celery --concurrency)")
    parser.add_argument("--llm-latency", type=float, default=0.0, help="simulated seconds per LLM call")
    parser.add_argument("--llm-concurrency", type=int, default=4, help="parallel LLM calls inside one task")
    parser.add_argument("--llm-threads", type=int, default=0,
                        help="serve the llm queue from a separate thread-pool worker of this many threads; "
                             "0 = one worker for every queue")
    parser.add_argument("--scale", default="", help="e.g. 100,500,1000: one cold ingest of the largest count, "
                                                    "docs/s when each count has finished")
    parser.add_argument("--full-docs", action="store_true",
                        help="the generator's whole multi-chunk profiles (default: each cut to one chunk)")
    parser.add_argument("--keep-reuse", action="store_true",
                        help="keep earlier runs' stored vectors (default: empty the reuse table first)")
    parser.add_argument("--skip-floor", action="store_true",
                        help="no floor (e.g. with --scale, whose figure is docs/s at each count)")
    parser.add_argument("--keep-services", action="store_true",
                        help="leave the embedded Postgres and Redis running when this run started them")
    parser.add_argument("--sweep", type=float, default=None,
                        help="send the vector index sweep every this many seconds, as beat does (default: the "
                             "product's ENGRAM_VECTOR_INDEX_SWEEP_SECONDS, 300); 0 = never")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    if args.rounds < 1 or args.docs < 1:
        parser.error("--rounds and --docs must be at least 1")

    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench").expanduser()))
    from make_bench_corpus import generate

    from engram.cli.app import prepare_services
    from engram.cli.demo import start_worker, stop_worker, wait_for_worker
    from engram.settings import get_settings, reset_settings

    from engram.adapters.services import embedded_to_start, stop_embedded

    reset_settings()
    if args.sweep is None:
        args.sweep = get_settings().vector_index_sweep_seconds
    started = embedded_to_start(get_settings())
    prepare_services()
    try:
        _run(args, generate, start_worker, stop_worker, wait_for_worker)
    finally:
        if not args.keep_services:
            stop_embedded(get_settings(), started)


def _run(args, generate, start_worker, stop_worker, wait_for_worker) -> None:
    from engram.settings import get_settings, reset_settings

    reset_settings()
    settings = get_settings()
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.keep_reuse:  # earlier runs' vectors would flatter this one (the bench's own database)
        from sqlalchemy import text

        from engram.adapters.store import Store

        with Store().unit_of_work() as uow:
            uow.conn.execute(text("TRUNCATE embedding_vectors, embedding_requests, embedding_refs"))
    run_tag = uuid.uuid4().hex[:6]
    checkpoints = tuple(int(x) for x in args.scale.split(",") if x)
    # Unique text per run, so content-hash dedupe and the reuse table never turn a set into a no-op.
    from engram.adapters.embed import get_embedder
    from engram.pipelines.cognify.chunk import chunk_budget, chunk_text

    limit, count_tokens = chunk_budget(settings.max_chunk_tokens, get_embedder(settings))

    def corpus(n: int, seed: int, label: str) -> list[tuple[str, str]]:
        docs, more = [], seed
        while len(docs) < n:  # the generator makes at most 300 per seed
            docs += generate(min(300, n - len(docs)), seed=more)
            more += 101
        if not args.full_docs:  # one chunk each, with room left for the run tag
            docs = [(name, chunk_text(t, limit - 24, count_tokens)[0].text) for name, t in docs]
        return [(name, f"{t}\n\nBenchmark run {run_tag}{label}.") for name, t in docs]

    sets = [("cold", corpus(max(checkpoints or (args.docs,)), 7, ""))]
    if not checkpoints:
        names = ["warm"] if args.rounds == 1 else [f"warm{k}" for k in range(1, args.rounds + 1)]
        sets += [(name, corpus(args.docs, 11 + 1000 * k, f", {name} set")) for k, name in enumerate(names)]
    cassette = args.out / f"cassette-{run_tag}.json"
    chunks = build_cassette([d for _, docs in sets for d in docs], settings, args.llm_latency,
                            cassette)

    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_LLM_CONCURRENCY": str(args.llm_concurrency)}
    os.environ.update(env)
    reset_settings()
    from engram.celery_app import create_app

    app = create_app()
    procs = []
    launched = time.perf_counter()
    if args.llm_threads:
        others = [q for q in settings.queues if q != settings.queue_llm]
        procs.append(start_worker(concurrency=args.workers, extra_env=env, log_path=args.out / f"worker-{run_tag}.log",
                                  extra_args=(f"--queues={','.join(others)}",)))
        procs.append(start_worker(concurrency=args.llm_threads, extra_env=env,
                                  log_path=args.out / f"worker-llm-{run_tag}.log",
                                  extra_args=(f"--queues={settings.queue_llm}", "--pool=threads")))
    else:
        procs.append(start_worker(concurrency=args.workers, extra_env=env, log_path=args.out / f"worker-{run_tag}.log"))
    memory = TreeMemory([p.pid for p in procs])
    memory.start()
    phases: dict = {}
    floors: dict = {}
    probes: dict = {}
    floor = None
    try:
        # Ready = every Celery worker answers (each `engram worker` runs a pipeline and an api
        # worker; the llm one its threads): a first ping answered by one of them is not ready.
        from engram.cli.worker import plan

        expected = (len(plan(settings, queues=",".join(others), concurrency=args.workers)) + 1 if args.llm_threads
                    else len(plan(settings, concurrency=args.workers)))
        for proc in procs:  # each launched process still alive; together `expected` workers
            wait_for_worker(app, proc, timeout=600, workers=expected)
        ready = time.perf_counter() - launched
        for phase, docs in sets:
            wanted = unique_texts(prepare_floor(docs, uuid.uuid4(), settings), set())
            already = stored_keys(wanted, settings)
            cpu_before = cpu_by_command()
            result = run_pipeline(app, docs, f"bench-{phase}-{run_tag}", checkpoints=checkpoints, sweep=args.sweep)
            result["cpu_s"] = cpu_delta(cpu_before, cpu_by_command())
            result["unique_texts_new"] = len(wanted) - already
            phases[phase] = result
            if floor is None or not args.skip_floor:  # right after its pipeline run, the workers idle
                memory.paused.set()
                time.sleep(1.0)  # the pool's torch threads stop spinning
                if floor is None:  # and the machine's speed right after the first set
                    floor = FloorProcess(settings)
                    probes["after_first_set"] = speed_probe(floor.embedder)
                if not args.skip_floor:
                    cpu_before = cpu_by_command()
                    floors[phase] = floor.run(docs, f"bench-floor-{phase}-{run_tag}")
                    floors[phase]["cpu_s"] = cpu_delta(cpu_before, cpu_by_command())
                memory.paused.clear()
                time.sleep(1.0)  # this process's torch threads stop spinning before the next set
        probes["at_end"] = speed_probe(floor.embedder)
        phases["cold"]["wall_incl_start_s"] = round(phases["cold"]["wall_s"] + ready, 3)
        if floors:
            floors["cold"]["wall_incl_load_s"] = round(floors["cold"]["wall_s"] + floor.load_s, 3)
    finally:
        for proc in procs:
            stop_worker(proc)
        mem = memory.stop()
        cassette.unlink(missing_ok=True)

    from engram.adapters.embed import torch_threads

    load_s = floor.load_s if floor else 0.0
    slots = args.llm_threads * args.llm_concurrency if args.llm_threads else args.workers * args.llm_concurrency
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "docs_per_set": len(sets[0][1]),
              "chunks": chunks, "workers": args.workers, "rounds": len(sets) - 1, "llm_latency_s": args.llm_latency,
              "llm_slots": slots, "torch_threads_floor": torch_threads(1), "worker_ready_s": round(ready, 3),
              "sweep_s": args.sweep,
              "model_load_s": round(load_s, 3),
              "speed_probe": probes, "pipeline": phases, "floor": floors, "memory": mem,
              "load_average": os.getloadavg()}
    ratios: dict = {}
    if floors:
        ratios["cold_incl_start_over_floor_incl_load"] = (phases["cold"]["wall_incl_start_s"]
                                                          / floors["cold"]["wall_incl_load_s"])
        for phase in phases:
            ratios[f"{phase}_over_floor"] = phases[phase]["wall_s"] / floors[phase]["wall_s"]
            if args.llm_latency:
                ideal = max(phases[phase]["llm_calls"] * args.llm_latency / slots, floors[phase]["wall_s"])
                ratios[f"{phase}_over_max_llm_floor"] = phases[phase]["wall_s"] / ideal
        warm = [p for p in phases if p != "cold"]
        if len(warm) > 1:
            ratios["warm_median_over_floor"] = statistics.median(ratios[f"{p}_over_floor"] for p in warm)
            ratios["warm_sum_over_floor_sum"] = (sum(phases[p]["wall_s"] for p in warm)
                                                 / sum(floors[p]["wall_s"] for p in warm))
            if args.llm_latency:
                ratios["warm_median_over_max_llm_floor"] = statistics.median(
                    ratios[f"{p}_over_max_llm_floor"] for p in warm)
    report["ratios"] = {k: round(v, 3) for k, v in ratios.items()}
    out = args.out / f"ingest-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2))

    print(f"{report['date']}  load average {', '.join(f'{x:.1f}' for x in report['load_average'])}")
    print(f"documents per set: {report['docs_per_set']}  chunks: {chunks}  workers: {args.workers}  "
          f"llm latency: {args.llm_latency}s (C={slots})  worker ready after {ready:.2f}s  "
          f"floor model load {load_s:.2f}s")
    for phase, p in phases.items():
        f = floors.get(phase)
        print(f"{phase:5} pipeline {p['wall_s']:7.2f}s {p['docs_per_s']:6.2f} docs/s  texts embedded {p['texts_embedded']}"
              f" / unique new {p['unique_texts_new']} (of {p['texts']} texts; {p['vectors_stored']} vectors stored; "
              f"{p['llm_calls']} LLM calls; accepted after {p['accept_s']:.2f}s)")
        print("      cpu s: " + ", ".join(f"{k} {v:.1f}" for k, v in list(p["cpu_s"].items())[:6]))
        print(f"      vector index sweeps sent: {p['sweeps_sent']} (every {args.sweep:g}s); the dataset's own"
              f" indexes at the end: {', '.join(p['own_indexes']) or 'none'}")
        if f:
            print(f"      floor    {f['wall_s']:7.2f}s {f['docs_per_s']:6.2f} docs/s  embed {f['embed_s']:.2f}s of "
                  f"{f['texts_embedded']} texts, write {f['write_s']:.2f}s  ratio {p['wall_s'] / f['wall_s']:.2f}")
            print("      cpu s: " + ", ".join(f"{k} {v:.1f}" for k, v in list(f["cpu_s"].items())[:6]))
        for mark, c in p.get("checkpoints", {}).items():
            print(f"      {mark:>5} documents done after {c['s']:.2f}s: {c['docs_per_s']:.2f} docs/s")
        for stretch in p.get("intervals", []):
            print(f"      documents {stretch['docs']:>9}: {stretch['docs_per_s']:.2f} docs/s; mean task s: "
                  + ", ".join(f"{k} {v:.3f}" for k, v in stretch["stage_mean_s"].items()))
    if floors:
        print(f"cold incl. worker start {phases['cold']['wall_incl_start_s']:.2f}s vs floor incl. model load "
              f"{floors['cold']['wall_incl_load_s']:.2f}s")
    print("machine speed (one torch thread, ms per forward): " + "; ".join(
        f"{k} short {v['short_forward_ms']} / 256-token {v['chunk_forward_ms']}" for k, v in probes.items()))
    print("ratios: " + "  ".join(f"{k} {v:.2f}" for k, v in report["ratios"].items()))
    print(f"worker tree peak: PSS {mem['peak_pss_sum_gb']:.2f} GB, RSS summed {mem['peak_rss_sum_gb']:.2f} GB "
          f"({mem['processes']} processes)")
    print(f"report: {out}")


if __name__ == "__main__":
    main()
