"""Why CHUNKS recall falls at 1M: the bench's synthetic vectors, or the HNSW index? (issue #38)

    python bench/hnsw_study.py                              # 4,000 real + 196,000 synthetic, two generators
    python bench/hnsw_study.py --params 16/64,24/200,32/256 --ef 100,200,400,800
    python bench/hnsw_study.py --real 1000 --per 10 --params 16/64 --questions 50   # a quick run

One dataset as bench/scale.py makes its largest (the same text generator, 64 topics): --real
chunks embedded by the real embedder (cached in --cache), questions about them as bench/
scale_measure.py asks (embedded too), and --per - 1 synthetic vectors per real one from each
generator:
- `iso`: bench/scale.py's (scale_rows.Synthesizer): a real vector moved by isotropic noise to
  its measured nearest-neighbour distance, so each real vector is a centre with a shell of
  synthetic ones around it;
- `gauss`: scale_rows.GaussianTopics: each topic's real mean and covariance (32 principal
  directions and an isotropic remainder), sampled: no shells.
For each generator it prints what tells data from data: the median local intrinsic dimension
(scale_rows.local_dimension) and nearest-neighbour cosine distance of one synthetic vector per
real one beside the real sample's own; the share of real vectors among every question's exact
top 10 beside their share of the rows (a generator whose vectors were exchangeable with the
real ones would give the two equal); then an HNSW graph for each --params M/ef_construction
(hnswlib: the algorithm pgvector implements, same parameters, not pgvector's code or speed), its
build seconds on --threads threads, and recall@10 against the exact top 10 at each --ef
(ef_search). `--engine pgvector` builds the same graphs in pgvector (the product's engine: a
scratch table in the bench's own embedded Postgres, ENGRAM_STATE_DIR or ~/.engram-bench-hnsw)
and adds each ef_search's SQL latency per question (p50/p95, no embedding); `both` runs the two.
Writes bench/results/hnsw-study-<timestamp>.json. hnswlib: `pip install -e '.[bench]'`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "corpus"))
from scale_rows import (  # noqa: E402 - beside this script
    GaussianTopics, Synthesizer, Vocabulary, local_dimension, nearest_distances, question, split)


def sample(real_chunks: int, questions: int, seed: int, cache: Path) -> tuple[np.ndarray, list[int], np.ndarray]:
    """The real sample's unit vectors, each chunk's topic, and the questions' unit vectors."""
    from engram.adapters.embed import get_embedder, set_torch_threads
    from engram.pipelines.cognify.chunk import chunk_budget
    from engram.settings import get_settings
    from latency_rows import Vectors, text_pool
    from scale import sample_phase

    settings = get_settings()
    embedder = get_embedder(settings)
    set_torch_threads(2)
    limit, count = chunk_budget(settings.max_chunk_tokens, embedder)
    plan = sample_phase(split(1_000_000)[:1], real_chunks, Vocabulary.from_text(text_pool().lines()), seed, limit, count)
    texts, topics = [], []
    for doc, topic in plan[0]["sample"]:
        texts += [c["text"] for c in doc.chunks]
        topics += [topic] * len(doc.chunks)
    rng = np.random.default_rng(seed)
    asked = [question(texts[i], rng) for i in rng.choice(len(texts), min(questions, len(texts)), replace=False)]
    vectors = Vectors(embedder, cache / f"hnsw-study-{real_chunks}-s{seed}")
    vectors.ensure(texts + asked)
    unit = vectors.matrix / np.linalg.norm(vectors.matrix, axis=1, keepdims=True)
    return unit[[vectors.index[t] for t in texts]], topics, unit[[vectors.index[t] for t in asked]]


def synthetic(name: str, real: np.ndarray, topics: list[int], per_real: int, seed: int) -> np.ndarray:
    """per_real synthetic vectors per real one, topic by topic, from the named generator."""
    by_topic: dict[int, list[int]] = {}
    for row, topic in enumerate(topics):
        by_topic.setdefault(topic, []).append(row)
    if name == "gauss":
        gen = GaussianTopics(real, topics, seed=seed)
        return np.vstack([gen.vectors(t, per_real * len(rows)) for t, rows in sorted(by_topic.items())])
    synth = Synthesizer(real, seed=seed)
    return np.vstack([synth.vector(rows) for _, rows in sorted(by_topic.items()) for _ in range(per_real * len(rows))])


def describe(name: str, real: np.ndarray, topics: list[int], rows: np.ndarray, asked: np.ndarray, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    one = synthetic(name, real, topics, 1, seed + 1)
    top = np.argsort(-(asked @ rows.T), axis=1)[:, :10]
    return {"local_dimension": round(local_dimension(one, 500, rng), 1),
            "nn_distance_p50": round(float(np.median(nearest_distances(one, 2000, rng))), 3),
            "real_share_of_top10": round(float(np.mean(top < len(real))), 3),
            "real_share_of_rows": round(len(real) / len(rows), 3)}


def recall(rows: np.ndarray, asked: np.ndarray, params: list[tuple[int, int]], efs: list[int], threads: int) -> list:
    import hnswlib

    truth = np.argsort(-(asked @ rows.T), axis=1)[:, :10]
    out = []
    for m, construction in params:
        index = hnswlib.Index(space="cosine", dim=rows.shape[1])
        index.init_index(max_elements=len(rows), M=m, ef_construction=construction, random_seed=1)
        index.set_num_threads(threads)
        started = time.perf_counter()
        index.add_items(rows, np.arange(len(rows)))
        built = time.perf_counter() - started
        found = {}
        for ef in efs:
            index.set_ef(max(ef, 10))
            labels, _ = index.knn_query(asked, k=10)
            found[ef] = round(float(np.mean([len(set(labels[i]) & set(truth[i])) / 10 for i in range(len(asked))])), 3)
        out.append({"m": m, "ef_construction": construction, "build_s": round(built, 1), "recall_at_10": found})
        print(f"    M {m} ef_construction {construction}: build {built:.0f} s, recall@10 "
              + "  ".join(f"ef {ef} {r:.3f}" for ef, r in found.items()), flush=True)
    return out


def recall_pgvector(rows: np.ndarray, asked: np.ndarray, params: list[tuple[int, int]], efs: list[int],
                    memory: str) -> list:
    """The same graphs in pgvector (the product's engine): a scratch table of the rows in the
    bench's database, an HNSW index per params (build seconds, one parallel worker as on 2
    cores), and per ef_search recall@10 and the SQL's p50/p95 per question (no embedding)."""
    from sqlalchemy import text

    from engram.adapters.store.engine import get_engine
    from engram.cli.app import prepare_services

    prepare_services()
    truth = np.argsort(-(asked @ rows.T), axis=1)[:, :10]
    engine, out = get_engine(), []
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.execute(text("DROP TABLE IF EXISTS hnsw_study_vectors"))
        conn.execute(text(f"CREATE UNLOGGED TABLE hnsw_study_vectors (id int PRIMARY KEY, v vector({rows.shape[1]}))"))
        raw = conn.connection.dbapi_connection
        with raw.cursor() as cur, cur.copy("COPY hnsw_study_vectors (id, v) FROM STDIN") as copy:
            for i, row in enumerate(rows):
                copy.write_row((i, "[" + ",".join(f"{x:.7g}" for x in row) + "]"))
        conn.execute(text("VACUUM ANALYZE hnsw_study_vectors"))
        try:
            for m, construction in params:
                conn.execute(text(f"SET maintenance_work_mem = '{memory}'"))
                started = time.perf_counter()
                conn.execute(text("CREATE INDEX hnsw_study_index ON hnsw_study_vectors USING hnsw (v vector_cosine_ops)"
                                  f" WITH (m = {int(m)}, ef_construction = {int(construction)})"))
                built = time.perf_counter() - started
                found, millis = {}, {}
                conn.execute(text("SET enable_seqscan = off"))  # the graph, even where a scan would be cheaper
                for ef in efs:
                    conn.execute(text(f"SET hnsw.ef_search = {int(ef)}"))
                    got, times = [], []
                    for vector in asked:
                        literal = "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
                        t0 = time.perf_counter()
                        got.append(conn.execute(text("SELECT id FROM hnsw_study_vectors ORDER BY v <=> CAST(:v AS vector)"
                                                     " LIMIT 10"), {"v": literal}).scalars().all())
                        times.append((time.perf_counter() - t0) * 1000)
                    found[ef] = round(float(np.mean([len(set(g) & set(truth[i])) / 10 for i, g in enumerate(got)])), 3)
                    millis[ef] = (round(float(np.percentile(times, 50)), 1), round(float(np.percentile(times, 95)), 1))
                conn.execute(text("DROP INDEX hnsw_study_index"))
                out.append({"m": m, "ef_construction": construction, "build_s": round(built, 1), "recall_at_10": found,
                            "p50_p95_ms": millis})
                print(f"    pgvector M {m} ef_construction {construction}: build {built:.0f} s, recall@10 (p95 ms) "
                      + "  ".join(f"ef {ef} {r:.3f} ({millis[ef][1]})" for ef, r in found.items()), flush=True)
        finally:
            conn.execute(text("DROP TABLE IF EXISTS hnsw_study_vectors"))
    return out


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--real", type=int, default=4000, help="real-sample chunks (embedded)")
    parser.add_argument("--per", type=int, default=50, help="vectors per real one in the index (the 1M run: 50)")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--generators", default="iso,gauss")
    parser.add_argument("--params", default="16/64,24/200", help="M/ef_construction pairs (pgvector's default: 16/64)")
    parser.add_argument("--ef", default="100,200,400,800", help="ef_search values")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--engine", default="hnswlib", choices=("hnswlib", "pgvector", "both"),
                        help="pgvector: the same graphs in the bench's database (ENGRAM_STATE_DIR, default"
                             " ~/.engram-bench-hnsw), with SQL latency")
    parser.add_argument("--maintenance-work-mem", default="2GB", help="pgvector's memory for the graph build")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "engram-bench")
    args = parser.parse_args(argv)
    try:
        args.params = [tuple(int(x) for x in p.split("/")) for p in args.params.split(",")]
        args.ef = [int(x) for x in args.ef.split(",")]
    except ValueError:
        parser.error("--params takes M/ef_construction pairs like 16/64,24/200 and --ef numbers like 100,200")
    args.generators = args.generators.split(",")
    if any(g not in ("iso", "gauss") for g in args.generators) or any(len(p) != 2 for p in args.params):
        parser.error("--generators takes iso and/or gauss; --params M/ef_construction pairs")
    if args.real < 100 or args.per < 1:
        parser.error("--real must be at least 100 and --per at least 1")
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench-hnsw").expanduser()))
    try:
        if args.engine != "pgvector":
            import hnswlib  # noqa: F401
    except ImportError:
        raise SystemExit("bench/hnsw_study.py needs hnswlib (or --engine pgvector): pip install -e '.[bench]'") from None
    real, topics, asked = sample(args.real, args.questions, args.seed, args.cache)
    figures = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "real": len(real), "per": args.per,
               "questions": len(asked), "real_sample": {
                   "local_dimension": round(local_dimension(real, 500, np.random.default_rng(args.seed)), 1),
                   "nn_distance_p50": round(float(np.median(nearest_distances(real, 2000, np.random.default_rng(0)))), 3)},
               "generators": {}}
    print(f"real sample: {len(real)} chunks, local dimension {figures['real_sample']['local_dimension']},"
          f" nearest-neighbour distance p50 {figures['real_sample']['nn_distance_p50']}")
    for name in args.generators:
        rows = np.vstack([real, synthetic(name, real, topics, args.per - 1, args.seed + 2)]).astype(np.float32)
        found = describe(name, real, topics, rows, asked, args.seed)
        print(f"{name}: {len(rows)} vectors; " + ", ".join(f"{k} {v}" for k, v in found.items()), flush=True)
        if args.engine in ("hnswlib", "both"):
            found["hnsw"] = recall(rows, asked, args.params, args.ef, args.threads)
        if args.engine in ("pgvector", "both"):
            found["pgvector"] = recall_pgvector(rows, asked, args.params, args.ef, args.maintenance_work_mem)
        figures["generators"][name] = found
    out = HERE / "results" / f"hnsw-study-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=1))
    print(f"figures: {out}")
    return figures


if __name__ == "__main__":
    main()
