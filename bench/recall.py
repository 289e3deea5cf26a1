"""Recall benchmark: CHUNKS top-k through the real recall path, HNSW against exact scan.

    python bench/recall.py                      # 100k synthetic 384-d chunks, 200 queries
    python bench/recall.py --chunks 20000 --queries 100 --reload

Loads N synthetic chunks (clustered unit vectors, or --uniform random ones) by binary COPY
into a dedicated dataset, plus --distractors chunks in another dataset that share the HNSW
index (the dataset filter must skip them: pgvector 0.8 iterative scans). Each query runs
through `recall_query` (authorisation, dataset filter, lane, items) twice: with the HNSW
index, and as an exact scan (index scans disabled). Prints p50/p95 latency of both, their
ratio, recall@k of HNSW against exact and how many queries came back complete; writes
bench/results/recall-<N>-<timestamp>.json. A dataset already holding N chunks is reused.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bulk.py beside this script
USER = "bench"


class FixedEmbedder:
    """Query i's text maps to its precomputed vector: the benchmark measures search, not a model."""

    def __init__(self, vectors: dict[str, list[float]], dimension: int):
        self.vectors, self.dimension, self.name = vectors, dimension, "bench:fixed"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t] for t in texts]


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


class Synthetic:
    """Vectors around n/100 random centres (spread 0.6), so neighbours are meaningful; or uniform."""

    def __init__(self, n: int, dim: int, seed: int, uniform: bool):
        self.rng = np.random.default_rng(seed)
        self.dim, self.uniform = dim, uniform
        self.centres = unit(self.rng.standard_normal((max(1, n // 100), dim)))

    def sample(self, count: int) -> np.ndarray:
        if self.uniform:
            return unit(self.rng.standard_normal((count, self.dim)))
        picks = self.centres[self.rng.integers(0, len(self.centres), count)]
        noise = self.rng.standard_normal((count, self.dim)) * (0.6 / np.sqrt(self.dim))
        return unit(picks + noise)

    def batches(self, count: int, size: int = 5000):
        for start in range(0, count, size):
            yield self.sample(min(size, count - start))


def ensure_dataset(loader, name: str, data: Synthetic, count: int, reload: bool) -> tuple[object, float | None]:
    from engram.adapters.store import Store

    with Store().unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, USER) or uow.access.create_dataset(USER, name)
    have = loader.dataset_chunks(dataset)
    if have == count and not reload:
        return dataset, None
    loader.clear(dataset)
    started = time.perf_counter()
    done = 0
    for batch_no, batch in enumerate(data.batches(count)):
        done += loader.load(dataset, iter([batch]), label=f"{name}-{batch_no}")
        print(f"  {name}: {done}/{count} chunks", end="\r", flush=True)
    print()
    return dataset, time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def timed_recall(questions: list[str], dataset: str, k: int, embedder, gateway, exact: bool):
    from engram.models.payloads import RecallRequest
    from engram.tasks.recall import recall_query

    latencies, results = [], []
    for question in questions:
        req = RecallRequest(question=question, datasets=[dataset], user=USER, search_type="CHUNKS", top_k=k)
        started = time.perf_counter()
        result = recall_query(req, embedder=embedder, gateway=gateway, exact_scan=exact)
        latencies.append((time.perf_counter() - started) * 1000)
        results.append([c for item in result.items for c in item.provenance.chunk_ids])
    return latencies, results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks in the searched dataset")
    parser.add_argument("--distractors", type=int, default=None, help="chunks in another dataset (default N/4)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--uniform", action="store_true", help="uniform random unit vectors instead of clusters")
    parser.add_argument("--reload", action="store_true", help="reload even if the dataset holds N chunks")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    distractors = args.chunks // 4 if args.distractors is None else args.distractors

    from engram.adapters.llm.gateway import gateway_from_settings
    from bulk import BulkLoader
    from engram.adapters.store.engine import get_engine
    from engram.cli.app import prepare_services
    from engram.settings import get_settings

    prepare_services()
    settings = get_settings()
    dim = settings.embedding_dimension
    kind = "uniform" if args.uniform else "clustered"
    name = f"bench-recall-{kind}-{args.chunks}"
    data = Synthetic(args.chunks, dim, args.seed, args.uniform)
    loader = BulkLoader(get_engine())
    print(f"dataset {name}: {args.chunks} {kind} {dim}-d chunks (+{distractors} distractors)")
    _, load_s = ensure_dataset(loader, name, data, args.chunks, args.reload)
    if distractors:
        other = Synthetic(distractors, dim, args.seed + 1, args.uniform)
        other.centres = data.centres  # the same regions of space: the filter must do real work
        ensure_dataset(loader, f"{name}-distractors", other, distractors, args.reload)
    loader.analyze()

    queries = data.sample(args.queries + 5)
    vectors = {f"bench query {i}": q.tolist() for i, q in enumerate(queries)}
    questions = list(vectors)
    embedder, gateway = FixedEmbedder(vectors, dim), gateway_from_settings(settings)
    timed_recall(questions[-5:], name, args.k, embedder, gateway, exact=False)  # warm caches and pool
    questions = questions[: args.queries]
    hnsw_ms, hnsw_ids = timed_recall(questions, name, args.k, embedder, gateway, exact=False)
    exact_ms, exact_ids = timed_recall(questions, name, args.k, embedder, gateway, exact=True)

    recall_at_k = statistics.fmean(len(set(h) & set(e)) / max(1, len(e)) for h, e in zip(hnsw_ids, exact_ids))
    complete = sum(1 for h in hnsw_ids if len(h) == args.k) / len(hnsw_ids)
    figures = {
        "chunks": args.chunks, "distractors": distractors, "dimension": dim, "vectors": kind,
        "queries": args.queries, "k": args.k, "load_seconds": load_s,
        "hnsw_ms": {"p50": percentile(hnsw_ms, 50), "p95": percentile(hnsw_ms, 95), "mean": statistics.fmean(hnsw_ms)},
        "exact_ms": {"p50": percentile(exact_ms, 50), "p95": percentile(exact_ms, 95),
                     "mean": statistics.fmean(exact_ms)},
        f"recall@{args.k}": recall_at_k,
        "hnsw_complete": complete,
    }
    figures["exact_over_hnsw_p50"] = figures["exact_ms"]["p50"] / figures["hnsw_ms"]["p50"]
    figures["exact_over_hnsw_p95"] = figures["exact_ms"]["p95"] / figures["hnsw_ms"]["p95"]

    print(f"load: {'reused' if load_s is None else f'{load_s:.1f}s ({args.chunks / load_s:.0f} chunks/s)'}")
    print(f"CHUNKS top-{args.k} over {args.queries} queries, through recall_query:")
    for label, key in (("HNSW (iterative scan)", "hnsw_ms"), ("exact scan", "exact_ms")):
        f = figures[key]
        print(f"  {label:<22} p50 {f['p50']:8.2f} ms   p95 {f['p95']:8.2f} ms   mean {f['mean']:8.2f} ms")
    print(f"  exact / HNSW           p50 {figures['exact_over_hnsw_p50']:6.1f}x     "
          f"p95 {figures['exact_over_hnsw_p95']:6.1f}x")
    print(f"  recall@{args.k} of HNSW vs exact: {recall_at_k:.3f}; complete results: {complete:.0%}")

    out = args.out or HERE / "results" / f"recall-{args.chunks}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2))
    print(f"figures: {out}")
    return figures


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
