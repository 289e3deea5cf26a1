import pytest

from engram.pipelines.recall.ranking import (
    importance_factor,
    rank_hybrid,
    rank_weighted,
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


def test_score_fusion_keeps_a_lists_lead_and_ignores_a_flat_list():
    from engram.pipelines.recall.ranking import fuse_scores

    dense = [("a", 0.9), ("b", 0.2), ("c", 0.19)]
    bm25 = [("b", 2.02), ("a", 2.0), ("c", 1.0)]
    # Rank fusion ties a and b (first and second in each); by scores, dense puts a far ahead while
    # BM25 barely separates a from b.
    assert rank_weighted({"dense": ["a", "b", "c"], "bm25": ["b", "a", "c"]}, {"dense": 1, "bm25": 1}, 2)[0][1] \
        == rank_weighted({"dense": ["a", "b", "c"], "bm25": ["b", "a", "c"]}, {"dense": 1, "bm25": 1}, 2)[1][1]
    assert fuse_scores({"dense": dense, "bm25": bm25}, {"dense": 1.0, "bm25": 1.0}) == ["a", "b", "c"]
    flat = [("c", 1.0), ("b", 1.0), ("a", 1.0)]
    assert fuse_scores({"dense": dense, "bm25": flat}, {"dense": 1.0, "bm25": 1.0}) == ["a", "b", "c"]
    # An item a list did not return counts as that list's last score; a weightless list is ignored.
    assert fuse_scores({"dense": [("a", 0.9), ("b", 0.1)], "bm25": [("c", 5.0), ("b", 1.0)]},
                       {"dense": 1.0, "bm25": 1.0})[-1] == "b"
    assert fuse_scores({"dense": dense, "bm25": [("z", 9.0)]}, {"dense": 1.0}) == ["a", "b", "c"]


def test_the_walk_weighs_in_only_for_questions_asked_through_a_second_thing():
    from engram.models.search import SearchType
    from engram.pipelines.recall.registry import REGISTRY

    hybrid = REGISTRY[SearchType.HYBRID_COMPLETION]
    assert "graph" not in hybrid.weights_for("When did Caroline go to the support group?")
    assert "graph" not in hybrid.weights_for("Who approves expenses above 1000 euros?")
    assert hybrid.weights_for("In what city was the director of the film Jaws born?")["graph"] == 3.0
    assert hybrid.weights_for("The woman who founded Acme studied where?")["graph"] == 3.0
