"""Recall quality over a matrix of corpus styles: Engram's lanes and default route against plain
dense, BM25 and RRF baselines computed in the same run over the same stored chunks.

    python bench/recall_quality.py                     # the matrix: every corpus below, k = 10
    python bench/recall_quality.py --corpus hotpot     # one corpus
    python bench/recall_quality.py --corpus natural,kb --no-titles

Corpora: multihop (generated: 350 passages, 100 questions), natural (214 hand-written passages,
31 questions), hotpot (held-out HotpotQA-style: 840 passages, 84 questions), conversations
(multi-session chat between two people, one document per session; evidence recall) and kb (a
company knowledge base of short policy pages with numbers and "When does ..." questions).
The matrix ends with rule 4 per corpus: PASS when the default route scores at least its best
lane - 0.01 and at least the BM25 and dense baselines, at R@5 and at R@10.

Each corpus (bench/corpus/multihop.py, or with --corpus natural bench/corpus/natural.py: real
entities in hand-written Wikipedia-style prose, HotpotQA-style bridge and comparison questions
with lexically similar distractors; --corpus hotpot bench/corpus/hotpot.py: a held-out set in
HotpotQA's distractor setting, 10 passages per question, written by people who had not seen the
recall code) is loaded through the real load path in this process
(offline extractor, build_graph, the embedder, the store gateway's one-transaction load; no
Celery), one passage per data item named by its title (--no-titles: unnamed). Each question
runs through `recall_query` per lane and through the default route (no search type).
Baselines over the same passages: dense = the same MiniLM embedder, plain cosine (numpy);
BM25 = `bm25s` (Lucene idf, k1 1.5, b 0.75, PyStemmer English, its English stop list);
RRF(dense, BM25); all three rank the dataset's stored chunks, the units the lanes rank.
Reports answer-recall@1/5/10 (the normalised answer occurs in an item's text), or for the
conversations evidence-recall@k (the share of a question's evidence turns whose text lies inside
a returned item or its source chunk), MRR, per-kind R@5, recall latency p50/p95 per lane, and
the overlap of Engram's lexical top-10 with bm25s's. Writes
bench/results/recall-quality-<timestamp>.json.
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
LANES = ["CHUNKS", "CHUNKS_LEXICAL", "HYBRID_COMPLETION", "GRAPH_COMPLETION", "TEMPORAL", "default"]
CORPORA = ["multihop", "natural", "hotpot", "conversations", "kb"]
SEEDS = {"multihop": 16}  # the generated set's usual seed; the hand-written sets only shuffle by it


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def first_hit(texts: list[str], answer: str) -> int | None:
    want = f" {norm(answer)} "
    for rank, t in enumerate(texts):
        if want in f" {norm(t)} ":
            return rank
    return None


def percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2) if values else 0.0


def load(passages, dataset: str, titles: bool, settings) -> float | None:
    """Each passage as the cognify stages store it: classified (a transcript is a conversation),
    chunked by chunk_rows, extracted offline, drafted and loaded in one transaction."""
    from engram.adapters.embed import get_embedder
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.adapters.store import Store
    from engram.pipelines import ids
    from engram.pipelines.cognify.embedding import normalise, texts_to_embed
    from engram.pipelines.cognify.flow import chunk_rows, classified, document_draft

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
            name = title if titles else None
            item, _ = uow.graph.add_item(dataset_id, ids.content_hash(text.encode()), text,
                                         name=name, mime=None, source=None)
            kind = classified({"name": name, "mime": None, "content": text})
            chunks = chunk_rows(text, kind["doc_type"], settings.max_chunk_tokens, embedder)
            extractions = [offline_chunk_extraction(c["text"]).model_dump() for c in chunks]
            document, rows, draft = document_draft(item, dataset_id, chunks, extractions, title=kind["title"])
            keyed = [(k, normalise(t)) for k, t in texts_to_embed(rows, draft)]  # as the fleet embeds them
            prepared.append((item, document, kind, rows, draft))
            keyed_all.append(keyed)
    # One embedding pass over every text (the embedder batches), then one load transaction per document.
    flat = embedder.embed([t for keyed in keyed_all for _, t in keyed])
    position = 0
    for keyed, (item, document, kind, rows, draft) in zip(keyed_all, prepared):
        vectors = {k: flat[position + i] for i, (k, _) in enumerate(keyed)}
        position += len(keyed)
        with store.unit_of_work() as uow:
            uow.graph.load_document(dataset=dataset_id, item=item, document=document, doc_type=kind["doc_type"],
                                    title=kind["title"], chunk_rows=rows, draft=draft, vectors=vectors)
    with store.engine.connect() as conn:
        from sqlalchemy import text as sql

        conn.execution_options(isolation_level="AUTOCOMMIT").execute(sql("ANALYZE"))
    return time.perf_counter() - started


def stored_chunks(dataset: str) -> tuple[dict, np.ndarray]:
    """The dataset's stored chunks (id -> text), the units every lane and baseline ranks, and
    their stored vectors (the same embedder's: the dense baseline needs no second pass)."""
    from sqlalchemy import text as sql

    from engram.adapters.store import Store

    with Store().engine.connect() as conn:
        rows = conn.execute(sql("SELECT c.id, c.text, c.embedding::text AS v FROM chunks c"
                                " JOIN datasets d ON d.id = c.dataset_id JOIN users u ON u.id = d.owner_id"
                                " WHERE d.name = :d AND u.name = :u ORDER BY c.id"), {"d": dataset, "u": USER}).all()
    vectors = np.asarray([json.loads(r.v) for r in rows], dtype=np.float32).reshape(len(rows), -1)
    return {r.id: r.text for r in rows}, vectors


class Scorer:
    """Where a question's answer first shows in a ranked list of texts (answer recall), or, with
    evidence turns, the share of them inside the first k texts (evidence recall)."""

    def __init__(self, questions: list[dict]):
        self.evidence = [[f" {norm(e)} " for e in q["evidence"]] if q.get("evidence") else None
                         for q in questions]
        self.answers = [q["answer"] for q in questions]

    def score(self, n: int, texts: list[list[str]]) -> dict:
        """texts: per ranked item, the texts it carries (its own and its source chunks')."""
        if self.evidence[n] is None:
            return {"first": first_hit([" ".join(t) for t in texts], self.answers[n])}
        found = {}
        for rank, item in enumerate(texts):
            flat = " ".join(f" {norm(t)} " for t in item)
            for e in self.evidence[n]:
                if e not in found and e in flat:
                    found[e] = rank
        return {"evidence": [found.get(e) for e in self.evidence[n]]}


def scores(results: list[dict], kinds: list[str]) -> dict:
    def recall_at(r: dict, k: int) -> float:
        if "first" in r:
            return float(r["first"] is not None and r["first"] < k)
        return sum(x is not None and x < k for x in r["evidence"]) / len(r["evidence"])

    def reciprocal(r: dict) -> float:
        ranks = [r["first"]] if "first" in r else r["evidence"]
        found = [x for x in ranks if x is not None]
        return 1 / (min(found) + 1) if found else 0.0

    n = len(results)
    out = {f"R@{k}": round(sum(recall_at(r, k) for r in results) / n, 3) for k in (1, 5, 10)}
    out["MRR"] = round(sum(reciprocal(r) for r in results) / n, 3)
    for kind in sorted(set(kinds)):
        mine = [r for r, k in zip(results, kinds) if k == kind]
        out[f"R@5 {kind}"] = round(sum(recall_at(r, 5) for r in mine) / len(mine), 3)
    return out


def baselines(chunks: dict, vectors: np.ndarray, questions, embedder, scorer: Scorer, numbers: list[int]) -> dict:
    """Plain dense (numpy cosine over the stored vectors), BM25 and RRF over `chunks` for
    `questions` (numbered `numbers` in the scorer)."""
    import bm25s
    import Stemmer

    texts = list(chunks.values())
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    doc_vecs = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    out = {"dense": [], "bm25": [], "rrf": [], "bm25_top10": [], "bm25_scores": []}
    asked = np.asarray(embedder.embed([q["question"] for q in questions]), dtype=np.float32)
    for n, q, qv in zip(numbers, questions, asked):
        dense = list(np.argsort(-(doc_vecs @ (qv / np.linalg.norm(qv))))[:20])
        tokens = bm25s.tokenize([q["question"]], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, sc = retriever.retrieve(tokens, k=min(20, len(texts)), show_progress=False)
        lexical = [int(d) for d, s in zip(docs[0], sc[0]) if s > 0]
        fused: dict[int, float] = {}
        for ranked in (dense, lexical):
            for rank, d in enumerate(ranked):
                fused[int(d)] = fused.get(int(d), 0.0) + 1 / (60 + rank + 1)
        rrf = sorted(fused, key=lambda d: -fused[d])
        for name, ranked in (("dense", dense), ("bm25", lexical), ("rrf", rrf)):
            out[name].append(scorer.score(n, [[texts[d]] for d in ranked[:10]]))
        out["bm25_top10"].append([texts[d] for d in lexical[:10]])
        every = retriever.get_scores(tokens.ids[0] if hasattr(tokens, "ids") else tokens[0])
        out["bm25_scores"].append({texts[d]: float(every[d]) for d in range(len(texts))})
    return out


def rule4(lanes: dict) -> tuple[bool, str]:
    """The default route at least its best lane - 0.01 and at least BM25 and dense, at R@5 and R@10."""
    default = lanes.get("default")
    if default is None:
        return False, "no default route run"
    misses = []
    for at in ("R@5", "R@10"):
        bars = [(lanes["baseline bm25"][at], "bm25"), (lanes["baseline dense"][at], "dense")]
        others = [(f[at], name) for name, f in lanes.items() if name != "default" and "baseline" not in name]
        if others:  # --lanes default: no lane run, so only the baselines bound it
            best_lane = max(others)
            bars.insert(0, (best_lane[0] - 0.01, best_lane[1]))
        for bar, name in bars:
            if default[at] < bar - 1e-9:
                misses.append(f"{at} {default[at]} < {name} {round(bar, 3)}")
    return not misses, "; ".join(misses)


def run_corpus(corpus: str, args, settings, embedder, gateway) -> dict:
    from importlib import import_module

    module = import_module(corpus)
    seed = SEEDS.get(corpus, 0) if args.seed is None else args.seed
    documents, questions = module.generate(seed)
    titled = not args.no_titles
    base_name = f"bench-{corpus}-{seed}{'' if titled else '-untitled'}{args.tag}"
    # A grouped corpus (one conversation = one user's memory) loads a dataset per group.
    groups: dict[str | None, list[tuple[str, str]]] = {}
    for doc in documents:
        groups.setdefault(doc[2] if getattr(module, "GROUPED", False) else None, []).append(doc[:2])
    datasets = {g: base_name if g is None else f"{base_name}-{g}" for g in groups}
    loads = [load(docs, datasets[g], titled, settings) for g, docs in groups.items()]
    load_s = None if all(s is None for s in loads) else sum(s or 0.0 for s in loads)
    chunks_of = {g: stored_chunks(d) for g, d in datasets.items()}
    chunks = {cid: t for found, _ in chunks_of.values() for cid, t in found.items()}
    scorer = Scorer(questions)
    kinds = [q["kind"] for q in questions]
    base: dict[str, list] = {}
    for g in groups:  # each group's questions against its own chunks
        mine = [n for n, q in enumerate(questions) if q.get("group") == g]
        found = baselines(*chunks_of[g], [questions[n] for n in mine], embedder, scorer, mine)
        for name, values in found.items():
            base.setdefault(name, [None] * len(questions))
            for n, v in zip(mine, values):
                base[name][n] = v
    results: dict = {"corpus": corpus, "dataset": base_name, "datasets": len(datasets), "passages": len(documents),
                     "chunks": len(chunks), "questions": len(questions), "k": args.k,
                     "metric": "evidence recall" if questions[0].get("evidence") else "answer recall",
                     "load_seconds": None if load_s is None else round(load_s, 1),
                     "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "lanes": {}}
    for name in ("dense", "bm25", "rrf"):
        results["lanes"][f"baseline {name}"] = scores(base[name], kinds)
    results["lanes"].update(run_lanes(args, questions, [datasets[q.get("group")] for q in questions], chunks,
                                      scorer, base, embedder, gateway, results))
    results["rule4"], results["rule4_misses"] = rule4(results["lanes"])
    return results


def run_lanes(args, questions, datasets, chunks, scorer, base, embedder, gateway, results) -> dict:
    from engram.adapters.embed import set_torch_threads
    from engram.models.payloads import RecallRequest
    from engram.tasks.recall import recall_query

    set_torch_threads(1)  # as the api worker answers queries (one torch thread)
    results["machine"] = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before the lanes"
    lanes, routes, overlaps, tied = {}, {}, [], []
    kinds = [q["kind"] for q in questions]
    for lane in args.lanes.split(","):
        found, millis = [], []
        pinned = None if lane == "default" else lane
        recall_query(RecallRequest(question=questions[0]["question"], datasets=[datasets[0]], user=USER,
                                   search_type=pinned, top_k=args.k),
                     embedder=embedder, gateway=gateway)  # warm the pool and caches
        for n, q in enumerate(questions):
            req = RecallRequest(question=q["question"], datasets=[datasets[n]], user=USER, search_type=pinned,
                                top_k=args.k)
            started = time.perf_counter()
            result = recall_query(req, embedder=embedder, gateway=gateway)
            millis.append((time.perf_counter() - started) * 1000)
            items = [i for i in result.items if i.kind != "answer"]
            if lane == "default":
                routes[result.search_type] = routes.get(result.search_type, 0) + 1
            texts = [[i.text] + [chunks[c] for c in i.provenance.chunk_ids if c in chunks] for i in items]
            found.append(scorer.score(n, texts))
            if lane == "CHUNKS_LEXICAL" and base["bm25_top10"][n]:
                reference = base["bm25_top10"][n]
                mine = [i.text for i in items][: len(reference)]
                overlaps.append(len(set(mine) & set(reference)) / len(reference))
                # Ties: a chunk scoring as high as the reference's last counts as in its top-10.
                ref = base["bm25_scores"][n]
                floor = min(ref[t] for t in reference) - 1e-6
                tied.append(sum(ref.get(t, 0.0) >= floor for t in mine) / len(reference))
        figures = scores(found, kinds)
        figures["p50_ms"], figures["p95_ms"] = percentile(millis, 50), percentile(millis, 95)
        lanes[lane] = figures
    results["routes"] = routes
    results["lexical_top10_overlap_with_bm25s"] = round(statistics.mean(overlaps), 3) if overlaps else None
    results["lexical_top10_overlap_with_bm25s_ties"] = round(statistics.mean(tied), 3) if tied else None
    return lanes


def report(results: dict) -> None:
    print(f"\n{results['corpus']} ({results['dataset']}, {results['datasets']} dataset(s)): {results['passages']} documents, {results['chunks']} chunks, "
          f"{results['questions']} questions, {results['metric']}; load {results['load_seconds']} s; "
          f"{results['date']}")
    print(f"{'lane':<22}" + "".join(f"{c:>9}" for c in ("R@1", "R@5", "R@10", "MRR", "p50 ms", "p95 ms")))
    for lane, f in results["lanes"].items():
        print(f"{lane:<22}" + "".join(f"{f.get(c, ''):>9}" for c in ("R@1", "R@5", "R@10", "MRR", "p50_ms", "p95_ms")))
    print("R@5 per kind: " + "; ".join(
        f"{lane}: " + ", ".join(f"{k[4:]} {v}" for k, v in f.items() if k.startswith("R@5 "))
        for lane, f in results["lanes"].items() if lane in ("default", "CHUNKS_LEXICAL", "baseline bm25")))
    print(f"default route chose: {results['routes']}; lexical top-10 overlap with bm25s: "
          f"{results['lexical_top10_overlap_with_bm25s']} (ties: {results['lexical_top10_overlap_with_bm25s_ties']})")


def matrix(all_results: list[dict]) -> None:
    print(f"\n{'corpus':<15}{'metric':<17}" + "".join(f"{c:>12}" for c in (
        "default@5", "default@10", "best lane@5", "bm25@5", "dense@5", "rrf@5")) + "  rule 4")
    for r in all_results:
        lanes = r["lanes"]
        best = max(((f["R@5"], n) for n, f in lanes.items() if n != "default" and "baseline" not in n),
                   default=("-", None))
        d = lanes.get("default", {})
        print(f"{r['corpus']:<15}{r['metric']:<17}" + "".join(f"{v:>12}" for v in (
            d.get("R@5", "-"), d.get("R@10", "-"), best[0], lanes["baseline bm25"]["R@5"],
            lanes["baseline dense"]["R@5"], lanes["baseline rrf"]["R@5"]))
            + f"  {'PASS' if r['rule4'] else 'FAIL ' + r['rule4_misses']}")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=",".join(CORPORA),
                        help=f"comma-separated corpora (default all: {','.join(CORPORA)})")
    parser.add_argument("--seed", type=int, default=None, help="document order (multihop: the generated set)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--no-titles", action="store_true", help="items without names (no title entity)")
    parser.add_argument("--lanes", default=",".join(LANES), help="comma-separated lanes to run")
    parser.add_argument("--reload", action="store_true", help="load the corpora again (e.g. after extractor changes)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    args.tag = f"-{int(time.time())}" if args.reload else ""
    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench-quality").expanduser()))

    from engram.adapters.embed import get_embedder, set_torch_threads
    from engram.adapters.llm.gateway import gateway_from_settings
    from engram.cli.app import prepare_services
    from engram.settings import get_settings

    prepare_services()
    settings = get_settings()
    embedder, gateway = get_embedder(settings), gateway_from_settings(settings)
    all_results = []
    for corpus in args.corpus.split(","):
        if corpus not in CORPORA:
            parser.error(f"unknown corpus {corpus!r}: one of {', '.join(CORPORA)}")
        set_torch_threads(os.cpu_count() or 1)  # loading embeds in batches (run the bench on a quiet machine)
        results = run_corpus(corpus, args, settings, embedder, gateway)
        report(results)
        all_results.append(results)
    matrix(all_results)
    out = args.out or HERE / "results" / f"recall-quality-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(all_results, indent=2, default=str))
    return all_results


if __name__ == "__main__":
    main()
