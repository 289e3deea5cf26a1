import pytest

from engram.pipelines.recall.ranking import (
    importance_factor,
    rank_hybrid,
    rrf_fuse,
    rrf_k,
    truth_factor,
    truth_score,
)


@pytest.mark.parametrize("top_k,expected", [(1, 30), (5, 30), (10, 40), (15, 50), (20, 60), (100, 60)])
def test_rrf_k_is_clamped_between_30_and_60(top_k, expected):
    assert rrf_k(top_k) == expected


def test_rrf_fuse_sums_reciprocal_ranks():
    scores = rrf_fuse([["a", "b"], ["b", "c"]], top_k=10)  # k = 40
    assert scores["a"] == pytest.approx(1 / 41)
    assert scores["b"] == pytest.approx(1 / 42 + 1 / 41)
    assert scores["c"] == pytest.approx(1 / 42)


def test_rrf_fuse_counts_a_repeated_id_once_per_list():
    scores = rrf_fuse([["a", "a", "b"]], top_k=5)  # k = 30
    assert scores["a"] == pytest.approx(1 / 31)
    assert scores["b"] == pytest.approx(1 / 33)


def test_importance_factor():
    assert importance_factor(0.0) == 0.75
    assert importance_factor(1.0) == 1.25
    assert importance_factor(None) == 1.0
    assert importance_factor(7.0) == 1.25  # clamped
    assert importance_factor(-1.0) == 0.75


def test_truth_score_weights_by_positive_query_coords():
    # Σ node·max(q,0) / Σ max(q,0) = (0.8·1 + 0.2·1) / 2 = 0.5; the negative coord is ignored
    assert truth_score([0.8, 0.2, 0.9], [1.0, 1.0, -3.0]) == pytest.approx(0.5)
    assert truth_score([0.9, 0.1], [1.0, 0.0]) == pytest.approx(0.9)


def test_truth_score_clamps_and_defaults():
    assert truth_score([2.0], [1.0]) == 1.0
    assert truth_score([-1.0], [1.0]) == 0.0
    assert truth_score([], [1.0]) == 0.5
    assert truth_score([0.9], []) == 0.5
    assert truth_score(None, [1.0]) == 0.5
    assert truth_score([0.9, 0.9], [0.0, -1.0]) == 0.5  # zero weight


def test_truth_factor_range():
    assert truth_factor(0.0) == 0.75
    assert truth_factor(1.0) == 1.25
    assert truth_factor(None) == 1.0


def test_rank_hybrid_fuses_and_applies_factors():
    ranked = rank_hybrid(["a", "b"], ["b"], ["c"], top_k=10, importance={"a": 0.0}, truth={"c": 1.0})
    scores = dict(ranked)
    k = 40
    assert scores["a"] == pytest.approx(1 / (k + 1) * 0.75)
    assert scores["b"] == pytest.approx((1 / (k + 2) + 1 / (k + 1)))
    assert scores["c"] == pytest.approx(1 / (k + 1) * 1.25)
    assert [i for i, _ in ranked] == ["b", "c", "a"]


def test_rank_hybrid_ties_break_by_id_and_truncates():
    # x and y each appear once at rank 0: equal scores, order by id
    assert [i for i, _ in rank_hybrid(["y"], ["x"], [], top_k=5)] == ["x", "y"]
    assert len(rank_hybrid(["a", "b", "c"], [], [], top_k=2)) == 2


def test_rank_hybrid_is_sorted_descending():
    ranked = rank_hybrid(["a", "b", "c", "d"], ["d", "c"], ["d"], top_k=10)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    assert ranked[0][0] == "d"
