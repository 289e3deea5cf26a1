"""bench/recall.py end to end on a small N: it loads, measures both paths and reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "recall.py"


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_recall", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_recall_prints_and_writes_its_figures(services, tmp_path, capsys):
    out = tmp_path / "recall.json"
    figures = _bench_module().main(["--chunks", "2000", "--distractors", "500", "--queries", "20", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "p50" in printed and "p95" in printed and "recall@10 of HNSW vs exact" in printed
    assert json.loads(out.read_text()) == figures
    assert figures["chunks"] == 2000 and figures["queries"] == 20
    assert figures["hnsw_complete"] == 1.0  # the dataset filter never starves a query
    assert figures["recall@10"] >= 0.9
    assert figures["hnsw_ms"]["p50"] > 0 and figures["exact_ms"]["p50"] > 0
    # A second run reuses the loaded dataset instead of loading it again.
    again = _bench_module().main(["--chunks", "2000", "--distractors", "500", "--queries", "5", "--out", str(out)])
    assert again["load_seconds"] is None
