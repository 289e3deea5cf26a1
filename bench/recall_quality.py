"""Recall quality on a generated multi-hop set: Engram's lanes against plain dense and BM25
baselines computed in the same run.

    python bench/recall_quality.py                 # 350 passages, 100 questions, k = 10
    python bench/recall_quality.py --seed 3 --no-titles
    python bench/recall_quality.py --corpus natural    # 214 hand-written passages, 31 questions
    python bench/recall_quality.py --corpus hotpot     # held-out HotpotQA-style: 840 passages, 84 questions

The corpus (bench/corpus/multihop.py, or with --corpus natural bench/corpus/natural.py: real
entities in hand-written Wikipedia-style prose, HotpotQA-style bridge and comparison questions
with lexically similar distractors; --corpus hotpot bench/corpus/hotpot.py: a held-out set in
HotpotQA's distractor setting, 10 passages per question, written by people who had not seen the
recall code) is loaded through the real load path in this process
(offline extractor, build_graph, the embedder, the store gateway's one-transaction load; no
Celery), one passage per data item named by its title (--no-titles: unnamed). Each question
runs through `recall_query` per lane and through the default route (no search type).
Baselines over the same passages: dense = the same MiniLM embedder, plain cosine (numpy);
BM25 = `bm25s` (Lucene idf, k1 1.5, b 0.75, PyStemmer English, its English stop list);
RRF(dense, BM25). Reports answer-recall@1/5/10 (the normalised answer occurs in an item's
text), MRR, per-kind R@5, recall latency p50/p95 per lane, and the overlap of Engram's
lexical top-10 with bm25s's. Writes bench/results/recall-quality-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
USER = "bench"
LANES = ["CHUNKS", "CHUNKS_LEXICAL", "HYBRID_COMPLETION", "GRAPH_COMPLETION", "default"]


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def first_hit(texts: list[str], answer: str) -> int | None:
    want = f" {norm(answer)} "
    for rank, t in enumerate(texts):
        if want in f" {norm(t)} ":
            return rank
    return None


def scores(ranks: list[int | None], kinds: list[str]) -> dict:
    n = len(ranks)
    out = {f"R@{k}": round(sum(r is not None and r < k for r in ranks) / n, 3) for k in (1, 5, 10)}
    out["MRR"] = round(sum(1 / (r + 1) for r in ranks if r is not None) / n, 3)
    for kind in sorted(set(kinds)):
        mine = [r for r, k in zip(ranks, kinds) if k == kind]
        out[f"R@5 {kind}"] = round(sum(r is not None and r < 5 for r in mine) / len(mine), 3)
    return out


def percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2) if values else 0.0


def load(passages, dataset: str, titles: bool, settings) -> float | None:
    from engram.adapters.embed import get_embedder
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.adapters.store import Store
    from engram.pipelines import ids
    from engram.pipelines.cognify.chunk import chunk_for_embedder
    from engram.pipelines.cognify.extract import build_graph

    store = Store()
    with store.unit_of_work() as uow:
        found = uow.access.find_dataset(dataset, USER)
        if found is not None and uow.graph.counts(found)["chunks"] >= len(passages):
            return None
        dataset_id = found or uow.access.create_dataset(USER, dataset)
    embedder = get_embedder(settings)
    started = time.perf_counter()
    prepared, keyed_all = [], []
    with store.unit_of_work() as uow:
        for title, text in passages:
            chunks = chunk_for_embedder(text, settings.max_chunk_tokens, embedder)
            extractions = [offline_chunk_extraction(c.text) for c in chunks]
            item, _ = uow.graph.add_item(dataset_id, ids.content_hash(text.encode()), text,
                                         name=title if titles else None, mime=None, source=None)
            document = ids.document_id(item)
            rows = [{"id": ids.chunk_id(document, c.index), "index": c.index, "text": c.text,
                     "token_count": c.token_count, "cut_type": c.cut_type, "importance": 0.5} for c in chunks]
            doc_title = title if titles else text.strip().splitlines()[0][:200]  # as classify does
            draft = build_graph(dataset_id, [(r["id"], r["text"]) for r in rows], extractions, title=doc_title)
            keyed = [(r["id"], r["text"]) for r in rows] + [(s.id, s.text) for s in draft.summaries]
            keyed += [(e.id, e.name) for e in draft.entities] + [(t.id, t.name) for t in draft.entity_types]
            keyed += [(e.id, e.edge_text) for e in draft.edges]
            prepared.append((item, document, doc_title, rows, draft))
            keyed_all.append(keyed)
    # One embedding pass over every text (the embedder batches), then one load transaction per document.
    flat = embedder.embed([t for keyed in keyed_all for _, t in keyed])
    position = 0
    for keyed, (item, document, doc_title, rows, draft) in zip(keyed_all, prepared):
        vectors = {k: flat[position + i] for i, (k, _) in enumerate(keyed)}
        position += len(keyed)
        with store.unit_of_work() as uow:
            uow.graph.load_document(dataset=dataset_id, item=item, document=document, doc_type="text",
                                    title=doc_title, chunk_rows=rows, draft=draft, vectors=vectors)
    with store.engine.connect() as conn:
        from sqlalchemy import text as sql

        conn.execution_options(isolation_level="AUTOCOMMIT").execute(sql("ANALYZE"))
    return time.perf_counter() - started


def baselines(passages, questions, embedder) -> dict:
    import bm25s
    import Stemmer

    texts = [t for _, t in passages]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    doc_vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    doc_vecs /= np.linalg.norm(doc_vecs, axis=1, keepdims=True)
    out = {"dense": [], "bm25": [], "rrf": [], "bm25_top10": [], "bm25_scores": []}
    for q in questions:
        qv = np.asarray(embedder.embed([q["question"]])[0], dtype=np.float32)
        dense = list(np.argsort(-(doc_vecs @ (qv / np.linalg.norm(qv))))[:20])
        tokens = bm25s.tokenize([q["question"]], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, sc = retriever.retrieve(tokens, k=20, show_progress=False)
        lexical = [int(d) for d, s in zip(docs[0], sc[0]) if s > 0]
        fused: dict[int, float] = {}
        for ranked in (dense, lexical):
            for rank, d in enumerate(ranked):
                fused[int(d)] = fused.get(int(d), 0.0) + 1 / (60 + rank + 1)
        rrf = sorted(fused, key=lambda d: -fused[d])
        for name, ranked in (("dense", dense), ("bm25", lexical), ("rrf", rrf)):
            out[name].append(first_hit([texts[d] for d in ranked[:10]], q["answer"]))
        out["bm25_top10"].append([texts[d] for d in lexical[:10]])
        every = retriever.get_scores(tokens.ids[0] if hasattr(tokens, "ids") else tokens[0])
        out["bm25_scores"].append({texts[d]: float(every[d]) for d in range(len(texts))})
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--no-titles", action="store_true", help="items without names (no title entity)")
    parser.add_argument("--lanes", default=",".join(LANES), help="comma-separated lanes to run")
    parser.add_argument("--reload", action="store_true", help="load the corpus again (e.g. after extractor changes)")
    parser.add_argument("--corpus", choices=["multihop", "natural", "hotpot"], default="multihop",
                        help="generated multi-hop set (default), the hand-written natural-text set, or the "
                             "held-out HotpotQA-style set")
    parser.add_argument("--dataset", default=None, help="dataset name (default bench-<corpus>-<seed>)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench-quality").expanduser()))
    from importlib import import_module

    generate = import_module(args.corpus).generate

    from engram.adapters.embed import get_embedder
    from engram.adapters.llm.gateway import gateway_from_settings
    from engram.cli import prepare_services
    from engram.models.payloads import RecallRequest
    from engram.settings import get_settings
    from engram.tasks.recall import recall_query

    prepare_services()
    settings = get_settings()
    passages, questions = generate(args.seed)
    dataset = args.dataset or f"bench-{args.corpus}-{args.seed}{'-untitled' if args.no_titles else ''}"
    if args.reload:
        dataset += f"-{int(time.time())}"
    load_s = load(passages, dataset, not args.no_titles, settings)
    embedder, gateway = get_embedder(settings), gateway_from_settings(settings)
    kinds = [q["kind"] for q in questions]
    base = baselines(passages, questions, embedder)
    results: dict = {"corpus": args.corpus, "passages": len(passages), "questions": len(questions),
                     "k": args.k,
                     "load_seconds": None if load_s is None else round(load_s, 1),
                     "date": time.strftime("%Y-%m-%d %H:%M UTC"),
                     "lanes": {}}
    for name in ("dense", "bm25", "rrf"):
        results["lanes"][f"baseline {name}"] = scores(base[name], kinds)
    overlaps, tied = [], []
    from engram.adapters.embed import set_torch_threads

    set_torch_threads(1)  # as the api worker answers queries (one torch thread)
    results["machine"] = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before the lanes"
    for lane in args.lanes.split(","):
        ranks, millis = [], []
        recall_query(RecallRequest(question=questions[0]["question"], datasets=[dataset], user=USER,
                                   search_type=None if lane == "default" else lane, top_k=args.k),
                     embedder=embedder, gateway=gateway)  # warm the pool and caches
        for n, q in enumerate(questions):
            req = RecallRequest(question=q["question"], datasets=[dataset], user=USER,
                                search_type=None if lane == "default" else lane, top_k=args.k)
            started = time.perf_counter()
            result = recall_query(req, embedder=embedder, gateway=gateway)
            millis.append((time.perf_counter() - started) * 1000)
            texts = [i.text for i in result.items]
            ranks.append(first_hit(texts, q["answer"]))
            if lane == "CHUNKS_LEXICAL":
                reference = base["bm25_top10"][n]
                if reference:
                    mine = texts[: len(reference)]
                    overlaps.append(len(set(mine) & set(reference)) / len(reference))
                    # Ties: a passage scoring as high as the reference's last counts as in its top-10.
                    ref = base["bm25_scores"][n]
                    floor = min(ref[t] for t in reference) - 1e-6
                    tied.append(sum(ref.get(t, 0.0) >= floor for t in mine) / len(reference))
        figures = scores(ranks, kinds)
        figures["p50_ms"], figures["p95_ms"] = percentile(millis, 50), percentile(millis, 95)
        results["lanes"][lane] = figures
    results["lexical_top10_overlap_with_bm25s"] = round(statistics.mean(overlaps), 3) if overlaps else None
    results["lexical_top10_overlap_with_bm25s_ties"] = round(statistics.mean(tied), 3) if tied else None
    print(f"dataset {dataset}: {len(passages)} passages, {len(questions)} questions ({', '.join(sorted(set(kinds)))}); "
          f"load {results['load_seconds']} s; machine shared, {results['date']}")
    header = f"{'lane':<22}" + "".join(f"{c:>9}" for c in ("R@1", "R@5", "R@10", "MRR", "p50 ms", "p95 ms"))
    print(header)
    for lane, f in results["lanes"].items():
        print(f"{lane:<22}" + "".join(f"{f.get(c, ''):>9}" for c in ("R@1", "R@5", "R@10", "MRR", "p50_ms", "p95_ms")))
    print("R@5 per kind: " + "; ".join(
        f"{lane}: " + ", ".join(f"{k[4:]} {v}" for k, v in f.items() if k.startswith("R@5 "))
        for lane, f in results["lanes"].items()))
    print(f"lexical top-10 overlap with bm25s: {results['lexical_top10_overlap_with_bm25s']} "
          f"(ties counted as matches: {results['lexical_top10_overlap_with_bm25s_ties']})")
    out = args.out or HERE / "results" / f"recall-quality-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
