"""The pruned BM25 list's bounds (adapters/store/search_bm25.py): which common terms it may read
only for the chunks the rarer ones found."""

from __future__ import annotations

import math

from engram.adapters.store.search_bm25 import idf, skipped_terms


def test_idf_is_lucenes():
    assert idf(100, 1) == math.log(1 + 99.5 / 1.5)
    assert idf(100, 100) > 0  # a term in every chunk still counts a little (Lucene's +1)


def test_skipped_terms_are_the_commonest_whose_bounds_stay_under_the_threshold():
    bounds = {"what": 0.4, "did": 0.5, "otter": 6.0, "kelp": 3.0, "eat": 1.2}
    assert skipped_terms(bounds, 0.95) == ["what", "did"]
    assert skipped_terms(bounds, 2.1) == ["what", "did", "eat"]
    assert skipped_terms(bounds, 0.3) == []
    # Never every term's bound beyond the threshold: the sum of those skipped stays at most it.
    assert sum(bounds[t] for t in skipped_terms(bounds, 5.0)) <= 5.0
