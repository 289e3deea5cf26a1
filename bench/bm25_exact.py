"""Engram's BM25 list against `bm25s` on one loaded dataset (issue #38: exact scores, rank overlap >= .99).

    python bench/recall_latency.py --sizes 10000 --load-only     # the 10,000-chunk sample, once
    python bench/bm25_exact.py                                   # bench-latency-10000-s7-v1

The reference: `bm25s` (method "lucene", k1 1.5, b 0.75) indexes every chunk of the dataset as
Engram's own tokenizer reads its text (pipelines/recall/lexical.terms: the same terms, so the
check is of the scoring and the list, not of two stop lists), read from the chunks' text, not
from the postings. Each question's terms are pipelines/recall/lexical.query_terms, a term
repeated as often as the question says it. Engram's list: SearchRepository.chunks_bm25 (the
pruned read, adapters/store/search_bm25.py, from FULL_READ postings on; --prune-always: every
list) at top 10 and top 30 (the default route's depth).
Prints, per depth, the mean overlap of the two top-k sets, the share of questions whose lists
are identical, and the largest score difference; and the postings each list read against all
postings of the question's terms. Exit 1 below the line (overlap .99 at top 10).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
LINE = 0.99


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="bench-latency-10000-s7-v1")
    parser.add_argument("--user", default="bench")
    parser.add_argument("--questions", type=int, default=441)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--prune-always", action="store_true",
                        help="prune every list (search_bm25.FULL_READ 0), not only those over FULL_READ postings")
    args = parser.parse_args(argv)
    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench-latency").expanduser()))

    import bm25s
    from sqlalchemy import text

    from engram.adapters.store import Store
    from engram.cli.app import prepare_services
    from engram.pipelines.recall import lexical
    from recall_latency import questions

    prepare_services()
    if args.prune_always:
        from engram.adapters.store import search_bm25

        search_bm25.FULL_READ = 0
    with Store().unit_of_work() as uow:
        dataset = uow.access.find_dataset(args.dataset, args.user)
        if dataset is None:
            parser.error(f"no dataset {args.dataset!r} of {args.user!r} (load it: bench/recall_latency.py"
                         " --sizes 10000 --load-only)")
        rows = uow.conn.execute(text("SELECT id, text FROM chunks WHERE dataset_id = :d ORDER BY id"),
                                {"d": dataset}).all()
    ids = [r.id for r in rows]
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index([lexical.terms(r.text) for r in rows], show_progress=False)
    asked = questions(args.seed)[: args.questions]
    out = {"dataset": args.dataset, "chunks": len(ids), "questions": len(asked), "depths": {}}
    for k in (10, 30):
        overlaps, same, worst, read, every, millis = [], 0, 0.0, 0, 0, []
        for question in asked:
            terms = lexical.query_terms(question)
            tokens = [t for t, n in terms.items() for _ in range(n)]
            known = [t for t in tokens if t in retriever.vocab_dict]
            scores = retriever.get_scores(known) if known else np.zeros(len(ids))
            order = sorted((i for i in range(len(ids)) if scores[i] > 0), key=lambda i: (-scores[i], str(ids[i])))[:k]
            want = {ids[i]: float(scores[i]) for i in order}
            with Store().unit_of_work() as uow:
                started = time.perf_counter()
                got = uow.search.chunks_bm25([dataset], terms, k)
                millis.append((time.perf_counter() - started) * 1000)
                read += _postings_read(uow, dataset, terms, got)
                every += uow.conn.execute(text("SELECT count(*) FROM chunk_terms WHERE dataset_id = :d AND"
                                               " term = ANY(CAST(:t AS text[]))"), {"d": dataset, "t": list(terms)}).scalar_one()
            overlaps.append(len(want.keys() & {r["id"] for r in got}) / max(len(want), 1) if want or got else 1.0)
            same += [r["id"] for r in got] == list(want)
            worst = max([worst] + [abs(float(r["rank"]) - want[r["id"]]) for r in got if r["id"] in want])
        out["depths"][k] = {"overlap": round(float(np.mean(overlaps)), 4), "identical": round(same / len(asked), 4),
                            "max_score_diff": worst, "postings_read": read, "postings_of_terms": every,
                            "p50_ms": round(float(np.percentile(millis, 50)), 2),
                            "p95_ms": round(float(np.percentile(millis, 95)), 2)}
        d = out["depths"][k]
        print(f"top {k}: overlap {d['overlap']:.4f}, identical lists {d['identical']:.1%}, largest score difference"
              f" {worst:.2e}; postings read {read:,} of {every:,} ({read / max(every, 1):.1%});"
              f" list p50 {d['p50_ms']} ms p95 {d['p95_ms']} ms")
    out["pass"] = out["depths"][10]["overlap"] >= LINE
    print(f"{len(ids):,} chunks, {len(asked)} questions: {'PASS' if out['pass'] else 'FAIL'} (overlap at top 10"
          f" {out['depths'][10]['overlap']:.4f} vs {LINE})")
    return out


def _postings_read(uow, dataset, terms: dict[str, int], got: list[dict]) -> int:
    """Postings the pruned list read: every posting of the terms it read in full, plus one probe
    per (candidate, skipped term) (adapters/store/search_bm25.py counts them)."""
    read = getattr(uow.search, "bm25_read", None) or {}
    return read.get("postings", 0) + read.get("probes", 0)


if __name__ == "__main__":
    sys.exit(0 if main()["pass"] else 1)
