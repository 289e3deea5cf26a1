"""The hand-written recall benchmark sets stay sound: every answer sits in its supporting passage
and in no distractor of its question, every question's passages (or evidence turns) are there."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpus"


@pytest.mark.parametrize("name, passages, questions", [("natural", 214, 31), ("hotpot", 840, 84), ("kb", 51, 70),
                                                       ("conversations", 138, 256)])
def test_a_benchmark_set_passes_its_own_checks(name, passages, questions, monkeypatch):
    monkeypatch.syspath_prepend(str(CORPUS))
    module = importlib.import_module(name)
    try:
        found, asked = module.generate(0)
        assert (len(found), len(asked)) == (passages, questions)
        assert module.check() == []
        assert module.generate(0) == (found, asked) and module.generate(1)[0] != found  # seeded order
    finally:
        sys.modules.pop(name, None)


def test_the_quality_bench_scores_evidence_turns_and_judges_rule_four(monkeypatch):
    monkeypatch.syspath_prepend(str(CORPUS.parent))
    quality = importlib.import_module("recall_quality")
    try:
        questions = [{"question": "q1", "answer": "Pepper", "kind": "a"},
                     {"question": "q2", "answer": "x", "kind": "b", "evidence": ["I adopted Pepper.", "She is a beagle!"]}]
        scorer = quality.Scorer(questions)
        assert scorer.score(0, [["no"], ["It is Pepper."]]) == {"first": 1}
        # Each evidence turn found where a returned item, or its source chunk, holds its text.
        found = scorer.score(1, [["Ray: I adopted Pepper. Izzy: omg"], ["a fact", "Ray: She is a beagle! Izzy: aww"]])
        assert found == {"evidence": [0, 1]}
        figures = quality.scores([{"first": 1}, {"evidence": [0, None]}], ["a", "b"])
        assert (figures["R@1"], figures["R@5"]) == (0.25, 0.75)
        lanes = {"baseline dense": {"R@5": 0.5, "R@10": 0.7}, "baseline bm25": {"R@5": 0.7, "R@10": 0.8},
                 "CHUNKS_LEXICAL": {"R@5": 0.72, "R@10": 0.8}, "default": {"R@5": 0.711, "R@10": 0.8}}
        assert quality.rule4(lanes) == (True, "")
        lanes["default"] = {"R@5": 0.69, "R@10": 0.8}
        passed, why = quality.rule4(lanes)
        assert not passed and "CHUNKS_LEXICAL" in why and "bm25" in why
        # --lanes default runs no other lane: only the baselines bound the route.
        del lanes["CHUNKS_LEXICAL"]
        assert quality.rule4(lanes) == (False, "R@5 0.69 < bm25 0.7")
        lanes["default"] = {"R@5": 0.7, "R@10": 0.8}
        assert quality.rule4(lanes) == (True, "")
    finally:
        sys.modules.pop("recall_quality", None)
