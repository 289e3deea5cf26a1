"""The pruned BM25 list's pieces computed in Python (adapters/store/search_bm25.py): the idf of
the terms' weights and which rarest terms its probe reads."""

from __future__ import annotations

import math

from engram.adapters.store.search_bm25 import idf, probe_terms


def test_idf_is_lucenes():
    assert idf(100, 1) == math.log(1 + 99.5 / 1.5)
    assert idf(100, 100) > 0  # a term in every chunk still counts a little (Lucene's +1)


def test_the_probe_reads_the_heaviest_terms_within_its_postings_budget():
    weights = {"what": 0.4, "did": 0.5, "otter": 6.0, "kelp": 3.0, "eat": 1.2}
    dfs = {"what": 9000, "did": 8000, "otter": 40, "kelp": 900, "eat": 3000}
    assert probe_terms(weights, dfs, budget=1000) == ["otter", "kelp"]
    assert probe_terms(weights, dfs, budget=5000) == ["otter", "kelp", "eat"]
    # At least the heaviest term, even when it alone is over the budget.
    assert probe_terms(weights, dfs, budget=10) == ["otter"]
