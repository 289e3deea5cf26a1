"""Recall latency of the default route (no search type) at 1,000 and 100,000 chunks of real-shaped text.

    python bench/recall_latency.py                                # 1,000 and 100,000 chunks, 300 questions
    python bench/recall_latency.py --sizes 5000 --questions 50    # a short run while developing
    python bench/recall_latency.py --sizes 100000 --reload        # load the 100k dataset again
    python bench/recall_latency.py --load-only                    # load (or keep) the datasets, measure nothing

A script of its own, not a mode of bench/recall.py: that one measures the CHUNKS lane alone on
synthetic vectors with a fixed query embedder (HNSW against an exact scan); this one measures
what an agent waits for on the default route, query embedding included, over rows shaped like
the product's: issue #33 item 6 sets the lines, p95 <= 60 ms at 1,000 chunks and <= 100 ms at
100,000 (one api thread).

The deployment: one dataset per size (`bench-latency-<N>-s<seed>-v<GENERATOR>`; a dataset that
a completed load left with N chunks is reused, --reload loads it again) of chunks assembled from
the bench corpora's own text, so the BM25 postings have a real (Zipfian) vocabulary: 90 % prose
chunks of 3-6 sentences, 10 % conversation chunks of whole `Speaker: text` turns with their
conversation columns and turn windows; every row holds what the product's load writes for the
fields recall reads (text, lex_length, years, BM25 postings, embedding, windows), vectors are
the normalised mean of the real embedder's vectors of the chunk's sentences plus small noise
(bench/latency_rows.py says how). No entities, edges or summaries: the graph reads run against
an empty graph (the default route's graph walk joins only relational questions). Rows go in by
binary COPY (bench/latency_rows.Loader, bench-only code), then VACUUM ANALYZE; from INDEX_AFTER chunks
the HNSW indexes of chunks and chunk_windows are dropped for the COPY and built again after it,
with their own definitions.

Questions: the real questions of the conversations, kb, natural and hotpot sets, shuffled by
the seed, asked through `recall_query` with no search type and top_k 10 on one thread (torch on
one thread, as the api worker answers), embedded by the real embedder inside recall; the LLM
stays unset (offline defaults: completion types return their context). After a warm-up, each
size reports p50/p95/p99 of the default route, p50/p95 of the CHUNKS and CHUNKS_LEXICAL lanes
over the same questions, the query embedding alone (the same questions) and its share of the
default route's mean, the routes the router chose, the load time, the tables' sizes, and PASS
or FAIL against the line. Writes bench/results/recall-latency-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "corpus"))
from latency_rows import Assembler, Loader, Pool, Vectors, text_pool  # noqa: E402 - beside this script

USER = "bench"
GENERATOR = 1  # bump when the assembled rows change: datasets of another version are not reused
QUESTION_CORPORA = ("conversations", "kb", "natural", "hotpot")
LINES_MS = ((1_000, 60.0), (100_000, 100.0))  # issue #33 item 6: p95 of the default route
LANES = ("CHUNKS", "CHUNKS_LEXICAL")
# From this many chunks the HNSW indexes are built after the COPY, not grown row by row: 190k
# vectors inserted one by one into a live graph took over an hour on the shared 2-core machine.
INDEX_AFTER = 10_000


def line_for(chunks: int) -> float | None:
    """The p95 line (ms) a deployment of `chunks` chunks is held to: the smallest size at or above it."""
    return next((ms for size, ms in LINES_MS if chunks <= size), None)


def questions(seed: int) -> list[str]:
    from importlib import import_module

    asked = [q["question"] for corpus in QUESTION_CORPORA for q in import_module(corpus).generate()[1]]
    asked = list(dict.fromkeys(asked))
    random.Random(seed).shuffle(asked)
    return asked



def deployment(size: int, args, pool: Pool, vectors: Vectors, embedder, loader: Loader) -> dict:
    """The dataset of `size` chunks, loaded unless a completed load of it is there."""
    from engram.adapters.store import Store
    from engram.pipelines.cognify.chunk import chunk_budget
    from engram.settings import get_settings

    name = f"bench-latency-{size}-s{args.seed}-v{GENERATOR}"
    with Store().unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, USER) or uow.access.create_dataset(USER, name)
    state = get_settings().state_dir
    marker, saved = state / f"{name}-{dataset}.json", state / "bench-latency-vector-indexes.json"
    loader.restore_vector_indexes(saved)
    have = loader.counts(dataset)
    if marker.exists() and have["chunks"] == size and not args.reload:
        done = json.loads(marker.read_text())
        return {"name": name, "reused": True, **done, "rows": have}
    marker.unlink(missing_ok=True)
    limit, counter = chunk_budget(get_settings().max_chunk_tokens, embedder)
    started = time.perf_counter()
    documents = list(Assembler(pool, limit, counter, args.seed).documents(size))
    assemble_s = time.perf_counter() - started
    embed_s = vectors.ensure([line for doc in documents for c in doc.chunks for line in c["lines"]])
    started = time.perf_counter()
    written: dict[str, int] = {}
    rebuild = size >= INDEX_AFTER
    with loader.vector_indexes_built_after(saved) if rebuild else contextlib.nullcontext():
        loader.clear(dataset)
        for first in range(0, len(documents), args.batch):
            batch = documents[first:first + args.batch]
            for table, n in loader.load(dataset, batch, vectors, first, args.seed + first).items():
                written[table] = written.get(table, 0) + n
            print(f"  {name}: {written['chunks']}/{size} chunks", end="\r", flush=True)
        print()
        copy_s = time.perf_counter() - started
        started = time.perf_counter()
    index_s = time.perf_counter() - started
    started = time.perf_counter()
    loader.analyze()
    analyze_s = time.perf_counter() - started
    done = {"load_seconds": round(copy_s + index_s + analyze_s, 1), "copy_seconds": round(copy_s, 1),
            "index_seconds": round(index_s, 1) if rebuild else None, "analyze_seconds": round(analyze_s, 1),
            "assemble_seconds": round(assemble_s, 1), "pool_embed_seconds": round(embed_s, 1),
            "loaded_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(done))
    return {"name": name, "reused": False, **done, "rows": loader.counts(dataset)}


def own_indexes(loader: Loader) -> list[str]:
    """What the beat's maintenance sweep builds before recall is measured (a vector index of each
    dataset past OWN_INDEX_ROWS rows, adapters/store/vector_indexes.py), on a reused load too."""
    from engram.adapters.store.vector_indexes import VectorIndexes

    return VectorIndexes(loader.engine).sweep()["built"]


# ------------------------------------------------------------------ measuring


def percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(values), q)), 2)


def summary(millis: list[float], *qs: int) -> dict:
    return {**{f"p{q}": percentile(millis, q) for q in qs}, "mean": round(statistics.fmean(millis), 2)}


def timed(asked: list[str], dataset: str, search_type: str | None, k: int, embedder, gateway) -> tuple[list, dict]:
    from engram.models.payloads import RecallRequest
    from engram.tasks.recall import recall_query

    millis, routes = [], {}
    for question in asked:
        req = RecallRequest(question=question, datasets=[dataset], user=USER, search_type=search_type, top_k=k)
        started = time.perf_counter()
        result = recall_query(req, embedder=embedder, gateway=gateway)
        millis.append((time.perf_counter() - started) * 1000)
        routes[result.search_type] = routes.get(result.search_type, 0) + 1
    return millis, routes


def measure(dataset: str, asked: list[str], warm: list[str], k: int, embedder, gateway) -> dict:
    for search_type in (None, *LANES):  # warm the pool, the caches and the lanes' plans
        timed(warm, dataset, search_type, k, embedder, gateway)
    for question in warm:
        embedder.embed([question])
    default_ms, routes = timed(asked, dataset, None, k, embedder, gateway)
    out = {"default": summary(default_ms, 50, 95, 99), "routes": routes}
    for lane in LANES:
        out[lane] = summary(timed(asked, dataset, lane, k, embedder, gateway)[0], 50, 95)
    embed_ms = []
    for question in asked:
        started = time.perf_counter()
        embedder.embed([question])
        embed_ms.append((time.perf_counter() - started) * 1000)
    out["embed"] = summary(embed_ms, 50, 95)
    out["embed_share"] = round(out["embed"]["mean"] / out["default"]["mean"], 3)
    return out


def machine() -> dict:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cores": cores, "load_average": [round(x, 2) for x in os.getloadavg()]}


def commit() -> str | None:
    try:
        return subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def report(size: int, f: dict) -> None:
    d, rows = f["deployment"], f["deployment"]["rows"]
    load = (f"reused (loaded {d['loaded_at']} in {d['load_seconds']} s)" if d["reused"]
            else f"{d['load_seconds']} s (COPY {d['copy_seconds']} s, "
                 + (f"HNSW build {d['index_seconds']} s, " if d.get("index_seconds") is not None else "")
                 + f"ANALYZE {d['analyze_seconds']} s; "
                 f"assembling {d['assemble_seconds']} s, pool embedding {d['pool_embed_seconds']} s)")
    mib = {t: round(b / 2**20, 1) for t, b in f["table_bytes"].items()}
    print(f"\n{size:,} chunks ({d['name']}): {rows['chunks']} chunks, {rows['documents']} documents, "
          f"{rows['chunk_terms']} postings, {rows['chunk_windows']} windows; load {load}")
    print(f"  tables (all datasets): chunks {mib['chunks']} MiB, chunk_terms {mib['chunk_terms']} MiB, "
          f"chunk_windows {mib['chunk_windows']} MiB; {f['database_chunks']} chunks in the database")
    print(f"  {f['questions']} questions, top_k {f['k']}, one thread; load average before {f['machine']['load_average']}")
    m = f["default"]
    print(f"  {'default route':<16} p50 {m['p50']:7.2f} ms  p95 {m['p95']:7.2f} ms  p99 {m['p99']:7.2f} ms"
          f"  mean {m['mean']:7.2f} ms")
    for lane in (*LANES, "embed"):
        m = f[lane]
        label = "query embedding" if lane == "embed" else lane
        print(f"  {label:<16} p50 {m['p50']:7.2f} ms  p95 {m['p95']:7.2f} ms                mean {m['mean']:7.2f} ms")
    print(f"  query embedding alone: {f['embed_share']:.0%} of the default route's mean; routes: {f['routes']}")
    line = f["line_ms"]
    verdict = "no line for this size" if line is None else (
        f"{'PASS' if f['pass'] else 'FAIL'}: default route p95 {f['default']['p95']:.2f} ms vs line {line:.0f} ms")
    print(f"  {verdict}")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000", help="comma-separated chunk counts, one dataset each")
    parser.add_argument("--questions", type=int, default=300, help="questions timed per size (at most 441)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=400, help="documents per COPY transaction")
    parser.add_argument("--reload", action="store_true", help="load the datasets again even if complete")
    parser.add_argument("--load-only", action="store_true", help="load the datasets, measure nothing")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    if any(s < 1 for s in sizes) or args.questions < 1 or args.warmup < 1 or args.k < 1 or args.batch < 1:
        parser.error("--sizes, --questions, --warmup, --k and --batch must be at least 1")
    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench-latency").expanduser()))

    from sqlalchemy import text

    from engram.adapters.embed import get_embedder, set_torch_threads
    from engram.adapters.llm.gateway import gateway_from_settings
    from engram.adapters.store.engine import get_engine
    from engram.cli.app import prepare_services
    from engram.settings import get_settings

    prepare_services()
    settings = get_settings()
    embedder, gateway = get_embedder(settings), gateway_from_settings(settings)
    loader = Loader(get_engine())
    pool = text_pool()
    asked_all = questions(args.seed)
    asked = asked_all[: args.questions]
    warm = (asked_all[args.questions:] or asked)[: args.warmup]
    cache = settings.state_dir / f"bench-latency-pool-{hashlib.sha256(embedder.name.encode()).hexdigest()[:12]}"
    vectors = Vectors(embedder, cache)
    import latency_rows

    figures: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
                     "embedder": embedder.name, "noise": latency_rows.NOISE,
                     "conversation_share": latency_rows.CONVERSATION_SHARE,
                     "generator": GENERATOR, "seed": args.seed, "sizes": {}}
    print(f"pool: {len(pool.passages)} passages, {len(pool.sessions)} sessions, {len(pool.lines())} lines; "
          f"{len(asked_all)} questions, timing {len(asked)}")
    for size in sizes:
        set_torch_threads(os.cpu_count() or 1)  # loading embeds the pool in batches
        found = deployment(size, args, pool, vectors, embedder, loader)
        found["own_indexes_built"] = own_indexes(loader)
        if args.load_only:
            print(f"{size:,} chunks: {found}")
            continue
        set_torch_threads(1)  # as the api worker answers queries
        with loader.engine.connect() as conn:
            in_database = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()
        f = {"deployment": found, "table_bytes": loader.sizes(), "database_chunks": in_database,
             "questions": len(asked), "k": args.k, "machine": machine()}
        f.update(measure(found["name"], asked, warm, args.k, embedder, gateway))
        f["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        f["line_ms"] = line_for(size)
        f["pass"] = None if f["line_ms"] is None else f["default"]["p95"] <= f["line_ms"]
        figures["sizes"][str(size)] = f
        report(size, f)
    if args.load_only:
        return figures
    figures["pass"] = all(f["pass"] is not False for f in figures["sizes"].values())
    out = args.out or HERE / "results" / f"recall-latency-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2, default=str))
    print(f"figures: {out}")
    return figures


if __name__ == "__main__":
    found = main()
    sys.exit(0 if found.get("pass", True) else 1)
