"""The hand-written recall benchmark sets stay sound: every answer sits in its supporting passage
and in no distractor of its question, and every question's passages are there."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpus"


@pytest.mark.parametrize("name, passages, questions", [("natural", 214, 31), ("hotpot", 840, 84)])
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
