"""Recall at scale: 10 datasets, 1,000,000 chunks; every lane's latency and vector recall under dataset filters.

    python bench/scale.py                                   # the issue #38 run: 1,000,000 chunks (hours)
    python bench/scale.py --reuse                           # measure a deployment a completed build left
    python bench/scale.py --chunks 30000 --real-sample 3000 --questions 60    # a small validation run
    python bench/scale.py --build-only                      # build (or keep, with --reuse), measure nothing
    python bench/scale.py --reuse --filters all --questions 50    # one filter of a kept deployment
    ENGRAM_VECTOR_INDEX_M=24 ENGRAM_VECTOR_INDEX_EF_CONSTRUCTION=200 ENGRAM_VECTOR_EF_SEARCH=200 \
        python bench/scale.py --reuse                       # own indexes rebuilt so, read at that ef_search

The deployment (bench/scale_rows.py says how the rows are generated): ten datasets
`scale-<i>-of-<chunks>-s<seed>-v<GENERATOR>` of the user `bench`, one of 40 % of the chunks and
nine smaller ones in a geometric series; generated text of documents of 1-8 chunks of 3-6
sentences with a Zipfian vocabulary (the bench corpora's words, then pseudo-words), per-dataset
topics and generated entity names; vectors from the real embedder for --real-sample chunks
spread over the datasets in proportion, clustered synthetic vectors around them for the rest
(nearest-neighbour distances as measured on the real ones). Rows go in as the product's load
writes them (text, token_count by the embedder's tokenizer, lex_length, years, BM25 postings,
embedding) by binary COPY through bench/latency_rows.Loader (tests/integration/
test_recall_latency_bench.py checks that its rows equal load_document's); the HNSW indexes are
dropped for the COPY and built again after it; then VACUUM ANALYZE. No conversation chunks or
turn windows, no entities, edges or summaries: the graph lanes (entity walk, triplets) and
SUMMARIES are not measured at scale; the default route's graph read runs against an empty graph.
Other `scale-*` datasets of the state directory (and a previous build of these) are emptied
first and the tables rewritten (VACUUM FULL), so the sizes printed are this build's alone.

The measurement (bench/scale_measure.py): questions generated from the real-sample chunks of
the filtered datasets (an entity the chunk names and some of its rarer words), asked through
`recall_query` with top_k 10 on one thread (torch on one thread, as the api worker answers),
the query embedding inside; for each dataset filter (the smallest dataset, the largest, three,
all ten): p50/p95/p99 of the default route, CHUNKS and CHUNKS_LEXICAL, and recall@10 of CHUNKS
against the same lane with the indexes off (exact_scan: an exact ORDER BY distance) over the
same filter. Below 0.95 the bench tries larger hnsw.ef_search values (the product sets
hnsw.iterative_scan = relaxed_order and ef_search = max(ENGRAM_VECTOR_EF_SEARCH, 100 by default,
2 x the rows asked) in adapters/store/search.py) and prints recall and p95 for each. `--filters
largest,all` measures only those filters. Prints Postgres bytes per chunk by relation
(heap, TOAST, each index) and the database size, build times per phase, the load average, and
below --estimate-for chunks an extrapolation of build time and disk to that size. Writes
bench/results/scale-<timestamp>.json. The state directory defaults to ~/.engram-bench-scale
(its own embedded Postgres): ENGRAM_STATE_DIR / ENGRAM_DATABASE_URL override.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

import numpy as np

from engram.models.vector_index import check_build_memory

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "corpus"))
from latency_rows import Document, Loader, text_pool  # noqa: E402 - beside this script
from scale_measure import FILTER_NAMES  # noqa: E402
from scale_rows import Synthesizer, TextGenerator, Vocabulary, split  # noqa: E402

USER = "bench"
GENERATOR = 1  # bump when the generated rows change: a deployment of another version is not reused


class KeyedVectors:
    """The vector provider Loader.load asks (`mean(lines, rng)`): a chunk's `lines` is its key."""

    def __init__(self):
        self.by_key: dict[str, object] = {}

    def mean(self, lines, rng):
        return self.by_key[lines[0]]


def names(chunks: int, seed: int) -> list[str]:
    return [f"scale-{i}-of-{chunks}-s{seed}-v{GENERATOR}" for i in range(len(split(chunks)))]


def generate_documents(gen: TextGenerator, dataset: int, chunks: int, first: int, limit: int, count,
                       topics: list[int] | None = None):
    """Documents of 1-8 chunks, `chunks` in all; yields (document, topic). A chunk's key
    (its `lines`) is `d<dataset>-<number>`, numbered from `first`."""
    made = 0
    while made < chunks:
        topic = int(gen.rng.integers(0, len(gen.topics))) if not topics else topics[int(gen.rng.integers(0, len(topics)))]
        rows = []
        for index in range(min(int(gen.rng.integers(1, 9)), chunks - made)):
            text, tokens = gen.chunk(topic, limit, count)
            rows.append({"index": index, "text": text, "token_count": tokens, "cut_type": "sentence_end",
                         "lines": [f"d{dataset}-{first + made}"]})
            made += 1
        rows[-1]["cut_type"] = "end"
        yield Document(f"{gen.entity()}: {gen.topics[topic].words[0]}", "text", rows), topic


def sample_phase(sizes: list[int], real_sample: int, vocab: Vocabulary, seed: int, limit: int, count) -> dict:
    """Per dataset: its generator, and the sample documents (their chunks get real vectors)."""
    total, out = sum(sizes), {}
    for i, size in enumerate(sizes):
        gen = TextGenerator(vocab, size, seed * 1000 + i)
        n = min(size, max(1, round(real_sample * size / total)))
        out[i] = {"gen": gen, "sample": list(generate_documents(gen, i, n, 0, limit, count)), "size": size}
    return out


def load_dataset(args, loader: Loader, which: tuple, p: dict, vectors: tuple, window: tuple) -> tuple[int, tuple]:
    """COPY one dataset: its sample documents (real vectors, rows of `real` from `row` on), then
    generated ones around them, --batch documents a transaction. Returns the next sample row and
    the seconds spent (generating, copying)."""
    (i, name, dataset), (real, row, synth), (limit, count) = which, vectors, window
    keyed, generate_s, copy_s = KeyedVectors(), 0.0, 0.0
    centres: dict[int, list[int]] = {}
    for doc, topic in p["sample"]:
        for c in doc.chunks:
            keyed.by_key[c["lines"][0]] = real[row]
            centres.setdefault(topic, []).append(row)
            row += 1
    sampled = sum(len(d.chunks) for d, _ in p["sample"])
    docs = generate_documents(p["gen"], i, p["size"] - sampled, sampled, limit, count, list(centres))
    batch, number, done = [d for d, _ in p["sample"]], 0, 0
    while True:
        t0 = time.perf_counter()
        for doc, topic in docs:
            for c in doc.chunks:
                keyed.by_key[c["lines"][0]] = synth.vector(centres[topic])
            batch.append(doc)
            if len(batch) >= args.batch:
                break
        generate_s += time.perf_counter() - t0
        if not batch:
            break
        t0 = time.perf_counter()
        loader.load(dataset, batch, keyed, number, args.seed + number)
        copy_s += time.perf_counter() - t0
        number += len(batch)
        done += sum(len(d.chunks) for d in batch)
        batch, keyed.by_key = [], {}
        print(f"  {name}: {done}/{p['size']} chunks", end="\r", flush=True)
    print()
    return row, (generate_s, copy_s)


def build(args, dataset_ids: dict[str, object], embedder, loader: Loader, state: Path) -> tuple[dict, dict]:
    """Generate, embed, COPY, index and analyze the deployment; returns the phase times and the
    real sample's nearest-neighbour cosine distances (the synthetic vectors' offsets) by percentile."""
    from engram.pipelines.cognify.chunk import chunk_budget
    from engram.settings import get_settings
    from latency_rows import Vectors

    phases: dict[str, float] = {}
    sizes = split(args.chunks)
    started = time.perf_counter()
    vocab = Vocabulary.from_text(text_pool().lines())
    limit, count = chunk_budget(get_settings().max_chunk_tokens, embedder)
    plan = sample_phase(sizes, args.real_sample, vocab, args.seed, limit, count)
    phases["generate_sample"] = time.perf_counter() - started
    texts = [c["text"] for p in plan.values() for doc, _ in p["sample"] for c in doc.chunks]
    vectors = Vectors(embedder, state / f"scale-sample-{args.chunks}-{args.real_sample}-s{args.seed}-v{GENERATOR}")
    phases["embed_sample"] = vectors.ensure(texts)
    real = vectors.matrix[[vectors.index[t] for t in texts]]
    started = time.perf_counter()
    synth = Synthesizer(real, seed=args.seed)
    phases["nearest_distances"] = time.perf_counter() - started
    nn = {f"p{q}": round(float(np.percentile(synth.distances, q)), 4) for q in (10, 50, 90)}
    generate_s, copy_s = 0.0, 0.0
    saved = state / "scale-vector-indexes.json"
    with loader.vector_indexes_built_after(saved, args.maintenance_work_mem):
        row = 0
        for i, p in plan.items():
            name, dataset = names(args.chunks, args.seed)[i], dataset_ids[names(args.chunks, args.seed)[i]]
            row, seconds = load_dataset(args, loader, (i, name, dataset), p, (real, row, synth), (limit, count))
            generate_s, copy_s = generate_s + seconds[0], copy_s + seconds[1]
        started = time.perf_counter()
    phases.update(generate_rest=generate_s, copy=copy_s, hnsw_build=time.perf_counter() - started)
    started = time.perf_counter()
    loader.analyze()
    phases["vacuum_analyze"] = time.perf_counter() - started
    return {k: round(v, 1) for k, v in phases.items()}, nn


def deployment(args, embedder, loader: Loader) -> dict:
    """The datasets, built unless --reuse finds a completed build of them."""
    from sqlalchemy import text

    from engram.adapters.store import Store
    from engram.settings import get_settings

    wanted = names(args.chunks, args.seed)
    with Store().unit_of_work() as uow:
        ids = {n: uow.access.find_dataset(n, USER) or uow.access.create_dataset(USER, n) for n in wanted}
    state = get_settings().state_dir
    marker = state / f"scale-{args.chunks}-s{args.seed}-v{GENERATOR}.json"
    loader.restore_vector_indexes(state / "scale-vector-indexes.json", args.maintenance_work_mem)
    with loader.engine.connect() as conn:
        have = dict(conn.execute(text("SELECT dataset_id, count(*) FROM chunks WHERE dataset_id = ANY(:d)"
                                      " GROUP BY dataset_id"), {"d": list(ids.values())}).all())
        others = conn.execute(text("SELECT d.id FROM datasets d WHERE d.name LIKE 'scale-%' AND NOT d.id = ANY(:d)"),
                              {"d": list(ids.values())}).scalars().all()
    counts = [have.get(ids[n], 0) for n in wanted]
    if args.reuse and marker.exists() and counts == split(args.chunks):
        return {"reused": True, **json.loads(marker.read_text()), "ids": ids}
    marker.unlink(missing_ok=True)
    if others or any(counts):  # emptied, and their space given back: the sizes printed are this build's alone
        for dataset in [*others, *ids.values()]:
            loader.clear(dataset)
        with loader.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM FULL chunks, chunk_terms, chunk_windows, documents, data_items"))
    phases, nn = build(args, ids, embedder, loader, state)
    done = {"phases": phases, "real_nn_cosine_distance": nn, "built_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "sizes": dict(zip(wanted, split(args.chunks))), "real_sample": args.real_sample}
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(done))
    return {"reused": False, **done, "ids": ids}


def own_indexes(args, loader: Loader) -> dict:
    """What the product's maintenance sweep does next (engram.maintenance.vector_indexes): each
    dataset past the threshold gets its own HNSW index per vector table (adapters/store/
    vector_indexes.py), with the configured build parameters (ENGRAM_VECTOR_INDEX_M /
    _EF_CONSTRUCTION): timed; kept by --reuse (the sweep builds only what is missing, and rebuilds
    the indexes built with other parameters)."""
    from engram.adapters.store import Store
    from engram.adapters.store.vector_indexes import OWN_INDEX_ROWS
    from engram.settings import get_settings

    from sqlalchemy import text

    indexes = Store(loader.engine).vector_indexes(args.maintenance_work_mem)
    started = time.perf_counter()
    done = indexes.sweep(args.own_index_rows or OWN_INDEX_ROWS)
    seconds = round(time.perf_counter() - started, 1)
    own = [uuid.UUID(n[-32:]) for n in indexes.present() if n.startswith("vx_chunks_")]
    with loader.engine.connect() as conn:
        indexed = conn.execute(text("SELECT count(*) FROM chunks WHERE dataset_id = ANY(:d)"), {"d": own}).scalar_one()
    return {"seconds": seconds, "built": done["built"], "rebuilt": done["rebuilt"], "params": indexes.params,
            "ef_search": get_settings().vector_ef_search, "rows": args.own_index_rows or OWN_INDEX_ROWS,
            "chunks_indexed": indexed, "datasets_indexed": len(own)}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("--chunks", type=int, default=1_000_000, help="chunks over the 10 datasets (default 1M)")
    parser.add_argument("--real-sample", type=int, default=20_000, help="chunks embedded by the real embedder")
    parser.add_argument("--questions", type=int, default=200, help="questions timed per filter and lane")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=400, help="documents per COPY transaction")
    parser.add_argument("--maintenance-work-mem", default="4GB",
                        help="Postgres maintenance_work_mem for the HNSW build (1M 384-d vectors need ~2-3 GB)")
    parser.add_argument("--reuse", action="store_true", help="keep a completed build of the same size and seed")
    parser.add_argument("--build-only", action="store_true", help="build (or keep) the deployment, measure nothing")
    parser.add_argument("--estimate-for", type=int, default=1_000_000,
                        help="below this many chunks, extrapolate build time and disk to it")
    parser.add_argument("--own-index-rows", type=int, default=0,
                        help="rows past which a dataset gets its own vector index (default: the product's)")
    parser.add_argument("--filters", default="",
                        help="measure only these filters, comma-separated: smallest, middle, largest, 3, all"
                        " (default: every one)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    args.filters = [f.strip() for f in args.filters.split(",") if f.strip()]
    if unknown := [f for f in args.filters if f not in FILTER_NAMES]:
        parser.error(f"--filters takes {', '.join(FILTER_NAMES)}; got {', '.join(unknown)}")
    if args.chunks < 10 or not 1 <= args.real_sample <= args.chunks:
        parser.error("--chunks must be at least 10 and --real-sample between 1 and --chunks")
    try:
        check_build_memory(args.maintenance_work_mem)
    except ValueError as exc:
        parser.error(f"--maintenance-work-mem: {exc}")
    if min(args.questions, args.warmup, args.k, args.batch) < 1:
        parser.error("--questions, --warmup, --k and --batch must be at least 1")
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench-scale").expanduser()))
    from engram.adapters.services import embedded_to_start, stop_embedded
    from engram.cli.app import prepare_services
    from engram.settings import get_settings

    # The embedded servers this run starts it stops at the end, so the next run starts them with
    # its own settings (ENGRAM_EMBEDDED_SHARED_BUFFERS); running ones are left alone.
    started = embedded_to_start(get_settings())
    prepare_services()
    try:
        return _run(args)
    finally:
        stop_embedded(get_settings(), started)


def _run(args: argparse.Namespace) -> dict:
    from engram.adapters.embed import get_embedder, set_torch_threads
    from engram.adapters.llm.gateway import gateway_from_settings
    from engram.adapters.store.engine import get_engine
    from engram.settings import get_settings
    from recall_latency import commit, machine
    from scale_measure import estimate, measure, report, sizes

    settings = get_settings()
    embedder, gateway = get_embedder(settings), gateway_from_settings(settings)
    loader = Loader(get_engine())
    figures: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
                     "embedder": embedder.name, "generator": GENERATOR, "seed": args.seed, "chunks": args.chunks,
                     "real_sample": args.real_sample, "machine_before": machine()}
    set_torch_threads(os.cpu_count() or 1)  # the build embeds the sample in batches
    found = deployment(args, embedder, loader)
    figures["own_indexes"] = own_indexes(args, loader)
    if (figures["own_indexes"]["built"] or figures["own_indexes"]["rebuilt"]) and not found["reused"]:
        found["phases"]["own_indexes"] = figures["own_indexes"]["seconds"]
    figures["deployment"] = {k: v for k, v in found.items() if k != "ids"}
    figures["storage"] = sizes(loader.engine)
    if not found["reused"] and args.chunks < args.estimate_for:
        figures["estimate"] = estimate(figures, args.estimate_for)
    if not args.build_only:
        set_torch_threads(1)  # as the api worker answers queries
        figures["filters"] = measure(args, found["ids"], embedder, gateway)
    figures["machine_after"] = machine()
    report(figures)
    out = args.out or HERE / "results" / f"scale-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2, default=str))
    print(f"figures: {out}")
    return figures


if __name__ == "__main__":
    main()
