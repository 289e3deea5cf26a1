import pytest

from engram.pipelines.recall.metrics import (
    aggregate,
    answer_in_context,
    exact_match,
    normalize_answer,
    score_row,
    token_f1,
)


def test_normalize_answer_drops_case_punctuation_articles():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer(None) == ""


def test_exact_match():
    assert exact_match("the Eiffel tower.", "Eiffel Tower") == 1.0
    assert exact_match("Eiffel", "Eiffel Tower") == 0.0


def test_token_f1():
    # pred: [eiffel, tower, paris], gold: [eiffel, tower] → P=2/3, R=1 → F1=0.8
    assert token_f1("Eiffel Tower Paris", "the Eiffel Tower") == pytest.approx(0.8)
    assert token_f1("london", "paris") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("", "paris") == 0.0


def test_answer_in_context():
    assert answer_in_context("Eiffel Tower", ["We visited the eiffel tower, in Paris."])
    assert not answer_in_context("Louvre", ["We visited the Eiffel Tower."])
    assert not answer_in_context("art", ["a smart move"])  # whole tokens only
    assert not answer_in_context("", ["anything"])
    assert not answer_in_context("paris", [])


def test_aggregate_means_numeric_fields():
    rows = [score_row("paris", "Paris", ["paris is nice"]), score_row("london", "Paris", [])]
    rows[0]["question"] = "q1"  # non-numeric fields are ignored
    agg = aggregate(rows)
    assert agg["count"] == 2
    assert agg["exact_match"] == 0.5
    assert agg["f1"] == 0.5
    assert agg["answer_in_context"] == 0.5
    assert "question" not in agg


def test_aggregate_empty():
    assert aggregate([]) == {"count": 0.0}
