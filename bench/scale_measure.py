"""bench/scale.py's measurement: per dataset filter, every lane's latency (query embedding
included, one thread) and CHUNKS' recall@k against the exact scan; Postgres bytes per chunk by
relation; an extrapolation of build time and disk; the printed summary. Bench-only code."""

from __future__ import annotations

import math
import os
import statistics
import time
from contextlib import contextmanager

import numpy as np

LANES = ("CHUNKS", "CHUNKS_LEXICAL")
RECALL_LINE = 0.95
TIE_EPS = 1e-3  # ann-benchmarks' distance tolerance for recall with ties
EF_TRIES = (100, 200, 400, 800)  # hnsw.ef_search tried when the product's setting misses the line
TABLES = ("chunks", "chunk_terms", "chunk_windows", "documents", "data_items")


def summary(millis: list[float]) -> dict:
    return {**{f"p{q}": round(float(np.percentile(np.asarray(millis), q)), 2) for q in (50, 95, 99)},
            "mean": round(statistics.fmean(millis), 2)}


# --filters names -> the labels below
FILTER_NAMES = {"smallest": "1 (smallest)", "middle": "1 (middle)", "largest": "1 (largest)", "3": "3", "all": "all"}


def filters(ids: dict[str, object]) -> dict[str, list[str]]:
    """Dataset filters by label: the smallest dataset, a middle one, the largest, three
    (largest, middle, smallest), all of them. `ids` is in split order: largest first, smallest
    last. The middle one is past the own-index threshold at 100k chunks and up, the smallest at 1M
    (adapters/store/vector_indexes.py): own graphs and the exact scan are both measured."""
    ordered = list(ids)
    return {"1 (smallest)": [ordered[-1]], "1 (middle)": [ordered[len(ordered) // 2]], "1 (largest)": [ordered[0]],
            "3": [ordered[0], ordered[len(ordered) // 2], ordered[-1]], "all": ordered}


def questions(engine, dataset_ids: list, n: int, seed: int) -> list[str]:
    """Questions about random chunks of the datasets (bench/scale_rows.question)."""
    from sqlalchemy import text

    from scale_rows import question

    rng = np.random.default_rng(seed)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT text FROM chunks WHERE dataset_id = ANY(:d) ORDER BY md5(id::text || :s)"
                                 " LIMIT :n"), {"d": dataset_ids, "s": str(seed), "n": n}).scalars().all()
    return [question(t, rng) for t in rows]


def timed(asked: list[str], datasets: list[str], search_type, k: int, embedder, gateway, exact=False):
    from engram.models.payloads import RecallRequest
    from engram.tasks.recall import recall_query

    millis, routes, found, scores = [], {}, [], []
    for question in asked:
        req = RecallRequest(question=question, datasets=datasets, user="bench", search_type=search_type, top_k=k)
        started = time.perf_counter()
        result = recall_query(req, embedder=embedder, gateway=gateway, exact_scan=exact)
        millis.append((time.perf_counter() - started) * 1000)
        routes[result.search_type] = routes.get(result.search_type, 0) + 1
        found.append([c for item in result.items for c in item.provenance.chunk_ids])
        scores.append([item.score for item in result.items])  # CHUNKS: 1 - cosine distance (pipelines/recall/lanes.py)
    return millis, routes, found, scores


def recall_at(found: list[list], exact: list[list], k: int) -> float:
    return round(statistics.fmean(len(set(f[:k]) & set(e[:k])) / max(1, len(e[:k])) for f, e in zip(found, exact)), 4)


def recall_within(found: list[list[float]], exact: list[list[float]], k: int, eps: float = TIE_EPS) -> float:
    """ann-benchmarks' recall: a returned chunk counts when it is as near as the exact k-th one
    (scores are 1 - cosine distance), within `eps`. Chunks tied with the k-th at that distance are
    equally right answers, which the id-based recall_at counts as misses whenever the exact scan
    happened to list others of the tie."""
    def one(got: list[float], want: list[float]) -> float:
        want = want[:k]
        if not want:
            return 1.0
        return sum(score >= want[-1] - eps for score in got[:k]) / len(want)
    return round(statistics.fmean(one(g, w) for g, w in zip(found, exact)), 4)


@contextmanager
def ef_search(value: int):
    """The product's vector reads at ENGRAM_VECTOR_EF_SEARCH = `value`: the setting a user changes."""
    from engram.settings import reset_settings

    before = os.environ.get("ENGRAM_VECTOR_EF_SEARCH")
    os.environ["ENGRAM_VECTOR_EF_SEARCH"] = str(int(value))
    reset_settings()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ENGRAM_VECTOR_EF_SEARCH", None)
        else:
            os.environ["ENGRAM_VECTOR_EF_SEARCH"] = before
        reset_settings()


def measure_filter(datasets: list[str], asked: list[str], warm: list[str], k: int, embedder, gateway) -> dict:
    for search_type in (None, *LANES):  # warm the pool, the caches and the plans
        timed(warm, datasets, search_type, k, embedder, gateway)
    default_ms, routes, _, _ = timed(asked, datasets, None, k, embedder, gateway)
    out = {"datasets": datasets, "default": summary(default_ms), "routes": routes}
    lane_ms, _, hnsw, hnsw_scores = timed(asked, datasets, "CHUNKS", k, embedder, gateway)
    out["CHUNKS"] = summary(lane_ms)
    out["CHUNKS_LEXICAL"] = summary(timed(asked, datasets, "CHUNKS_LEXICAL", k, embedder, gateway)[0])
    exact_ms, _, exact, exact_scores = timed(asked, datasets, "CHUNKS", k, embedder, gateway, exact=True)
    out["CHUNKS_exact"] = summary(exact_ms)
    out["CHUNKS_recall"] = recall_at(hnsw, exact, k)
    out["CHUNKS_recall_within"] = recall_within(hnsw_scores, exact_scores, k)
    out["ef_search_tried"] = {}
    if out["CHUNKS_recall"] < RECALL_LINE:
        for value in EF_TRIES:
            with ef_search(value):
                ms, _, got, got_scores = timed(asked, datasets, "CHUNKS", k, embedder, gateway)
            out["ef_search_tried"][value] = {"recall": recall_at(got, exact, k), "p95": summary(ms)["p95"],
                                             "recall_within": recall_within(got_scores, exact_scores, k)}
            if out["ef_search_tried"][value]["recall"] >= RECALL_LINE:
                break
    return out


def measure(args, ids: dict[str, object], embedder, gateway) -> dict:
    from engram.adapters.store.engine import get_engine

    out = {}
    wanted = {FILTER_NAMES[f] for f in args.filters or FILTER_NAMES}
    for label, chosen in filters(ids).items():
        if label not in wanted:
            continue
        dataset_ids = [ids[n] for n in chosen]
        asked = questions(get_engine(), dataset_ids, args.questions + args.warmup, args.seed)
        warm, asked = asked[:args.warmup], asked[args.warmup:] or asked[:1]
        out[label] = measure_filter(chosen, asked, warm, args.k, embedder, gateway)
        out[label]["questions"] = len(asked)
        print(f"  measured filter {label}: default p95 {out[label]['default']['p95']} ms,"
              f" CHUNKS recall@{args.k} {out[label]['CHUNKS_recall']}"
              f" (within {TIE_EPS} of the k-th distance: {out[label]['CHUNKS_recall_within']})", flush=True)
    return out


def sizes(engine) -> dict:
    """Bytes by relation (each table's heap and TOAST, each of its indexes), per chunk, and the database's."""
    from sqlalchemy import text

    with engine.connect() as conn:
        chunks = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()
        rows = conn.execute(text(
            "SELECT t.relname, pg_relation_size(t.oid), COALESCE(pg_relation_size(NULLIF(t.reltoastrelid, 0)), 0)"
            " FROM pg_class t WHERE t.relname = ANY(:t) AND t.relkind = 'r'"
            " AND t.relnamespace = current_schema()::regnamespace"), {"t": list(TABLES)}).all()
        indexes = conn.execute(text(
            "SELECT t.relname, i.relname, pg_relation_size(i.oid) FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid"
            " JOIN pg_class i ON i.oid = x.indexrelid WHERE t.relname = ANY(:t)"
            " AND t.relnamespace = current_schema()::regnamespace ORDER BY 1, 2"), {"t": list(TABLES)}).all()
        database = conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
    relations = {}
    for table, heap, toast in rows:
        relations[f"{table} (heap)"] = heap
        if toast:
            relations[f"{table} (TOAST)"] = toast
    for table, index, size in indexes:
        relations[f"{table}: {index}"] = size
    per_chunk = {r: round(b / max(1, chunks), 1) for r, b in relations.items()}
    return {"chunks": chunks, "bytes": relations, "bytes_per_chunk": per_chunk,
            "tables_bytes_per_chunk": round(sum(relations.values()) / max(1, chunks), 1),
            "database_bytes": database, "database_bytes_per_chunk": round(database / max(1, chunks), 1)}


def estimate(figures: dict, target: int, target_sample: int = 20_000) -> dict:
    """Build time and disk at `target` chunks (`target_sample` of them embedded) from this build:
    the sample's phases linear in the sample (the nearest-distance probe: fixed), every other
    phase linear in the chunks except the HNSW build, n log n; disk as this build's database
    bytes per chunk (the fixed schema and catalog overhead counted too: an overestimate at small
    sizes). A lower bound where the work outgrows memory (the HNSW build past
    maintenance_work_mem, postings past shared buffers)."""
    phases, n, sample = figures["deployment"]["phases"], figures["chunks"], figures["real_sample"]
    factor = {"generate_sample": target_sample / sample, "embed_sample": target_sample / sample,
              "nearest_distances": 1.0, "hnsw_build": target / n * math.log(target) / math.log(n),
              # every dataset of the 1M split is past the threshold: all its chunks get an own index
              "own_indexes": target / max(1, figures.get("own_indexes", {}).get("chunks_indexed", n))
              * math.log(target) / math.log(n)}
    seconds = {p: s * factor.get(p, target / n) for p, s in phases.items()}
    return {"chunks": target, "real_sample": target_sample, "from_chunks": n, "from_real_sample": sample,
            "seconds": {p: round(s) for p, s in seconds.items()}, "hours": round(sum(seconds.values()) / 3600, 2),
            "database_gb": round(figures["storage"]["database_bytes_per_chunk"] * target / 1e9, 1)}


def report(f: dict) -> None:
    d, s = f["deployment"], f["storage"]
    built = f"reused (built {d['built_at']})" if d["reused"] else f"built {d['built_at']}"
    print(f"\n{f['chunks']:,} chunks in {len(d['sizes'])} datasets ({built}), {f['real_sample']:,} real vectors; "
          f"load average before {f['machine_before']['load_average']}, after {f['machine_after']['load_average']}")
    print("  build phases (s): " + ", ".join(f"{p} {v}" for p, v in d["phases"].items()))
    if "real_nn_cosine_distance" in d:
        print(f"  real sample's nearest-neighbour cosine distance (synthetic offsets): {d['real_nn_cosine_distance']}")
    if "own_indexes" in f:
        o = f["own_indexes"]
        print(f"  own vector indexes (datasets past {o['rows']:,} rows): {o['datasets_indexed']} datasets,"
              f" {o['chunks_indexed']:,} chunks; this run built {len(o['built'])} and rebuilt"
              f" {len(o.get('rebuilt', []))} in {o['seconds']} s (m / ef_construction {o.get('params', (16, 64))},"
              f" reads at ef_search {o.get('ef_search', 100)})")
    print(f"  Postgres bytes per chunk ({s['chunks']:,} chunks in the database):")
    for relation, per in s["bytes_per_chunk"].items():
        print(f"    {relation:<48} {per:10.1f} B/chunk  {s['bytes'][relation] / 2**20:9.1f} MiB")
    print(f"    {'tables + indexes':<48} {s['tables_bytes_per_chunk']:10.1f} B/chunk")
    print(f"    {'whole database':<48} {s['database_bytes_per_chunk']:10.1f} B/chunk"
          f"  {s['database_bytes'] / 2**20:9.1f} MiB")
    if "estimate" in f:
        e = f["estimate"]
        print(f"  estimate at {e['chunks']:,} chunks, {e['real_sample']:,} embedded (linear from {e['from_chunks']:,}"
              f" and {e['from_real_sample']:,}; HNSW n log n): build "
              f"{e['hours']} h ({', '.join(f'{p} {v} s' for p, v in e['seconds'].items())}), database {e['database_gb']} GB")
    print(f"  {'filter':<14} {'lane':<15} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  recall@10 (by id; by distance, ties within {TIE_EPS})")
    for label, m in f.get("filters", {}).items():
        for lane in ("default", *LANES, "CHUNKS_exact"):
            recall = (f"  {m['CHUNKS_recall']:.3f}; {m.get('CHUNKS_recall_within', float('nan')):.3f}"
                      if lane == "CHUNKS" else "")
            print(f"  {label:<14} {lane:<15} {m[lane]['p50']:8.2f} {m[lane]['p95']:8.2f} {m[lane]['p99']:8.2f}{recall}")
        for value, tried in m["ef_search_tried"].items():
            print(f"  {label:<14} ef_search {value:<5} recall@10 {tried['recall']:.3f}"
                  f" (by distance {tried.get('recall_within', float('nan')):.3f}), CHUNKS p95 {tried['p95']} ms")
