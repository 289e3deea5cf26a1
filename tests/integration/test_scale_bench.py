"""bench/scale.py at a tiny size: it builds ten datasets, measures every lane under each dataset
filter with recall@10 against the exact scan, prints sizes by relation, and --reuse keeps the build."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scale.py"


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_scale", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_bench_scale_builds_measures_and_reuses(services, tmp_path, capsys, monkeypatch):
    out = tmp_path / "scale.json"
    argv = ["--chunks", "300", "--real-sample", "60", "--questions", "3", "--warmup", "1", "--out", str(out)]
    figures = _bench_module().main(argv)
    printed = capsys.readouterr().out
    for shown in ("B/chunk", "chunk_terms (heap)", "whole database", "estimate at 1,000,000 chunks", "CHUNKS_LEXICAL",
                  "recall@10", "1 (smallest)", "all"):
        assert shown in printed, shown
    assert json.loads(out.read_text()) == json.loads(json.dumps(figures, default=str))
    sizes = figures["deployment"]["sizes"]
    assert len(sizes) == 10 and sum(sizes.values()) == 300 and max(sizes.values()) == 120
    from engram.adapters.store.engine import get_engine

    with get_engine().connect() as conn:
        stored = dict(conn.execute(text(
            "SELECT d.name, count(c.id) FROM datasets d JOIN chunks c ON c.dataset_id = d.id"
            " WHERE d.name = ANY(:n) GROUP BY d.name"), {"n": list(sizes)}).all())
        postings = conn.execute(text("SELECT count(*) FROM chunk_terms p JOIN datasets d ON d.id = p.dataset_id"
                                     " WHERE d.name = ANY(:n)"), {"n": list(sizes)}).scalar_one()
    assert stored == sizes and postings > 300 * 20
    assert set(figures["filters"]) == {"1 (smallest)", "1 (middle)", "1 (largest)", "3", "all"}
    for label, m in figures["filters"].items():
        for lane in ("default", "CHUNKS", "CHUNKS_LEXICAL", "CHUNKS_exact"):
            assert 0 < m[lane]["p50"] <= m[lane]["p95"] <= m[lane]["p99"], (label, lane)
        assert 0.0 <= m["CHUNKS_recall"] <= 1.0 and m["questions"] == 3
    assert len(figures["filters"]["all"]["datasets"]) == 10
    assert figures["storage"]["bytes"]["chunks (heap)"] > 0 and figures["storage"]["database_bytes"] > 0
    assert not figures["deployment"]["reused"] and figures["estimate"]["database_gb"] > 0
    # --reuse keeps the completed build.
    again = _bench_module().main([*argv, "--reuse", "--build-only"])
    assert again["deployment"]["reused"] and again["deployment"]["sizes"] == sizes and "filters" not in again
    only = _bench_module().main([*argv, "--reuse", "--filters", "largest,all"])  # a chosen few filters
    assert set(only["filters"]) == {"1 (largest)", "all"}
    with pytest.raises(SystemExit):
        _bench_module().main([*argv, "--reuse", "--filters", "everything"])
    assert "--filters takes smallest, middle, largest, 3, all" in capsys.readouterr().err
    # The configured build parameters reach the own indexes: the defaults, then rebuilt with others.
    from engram.adapters.store.vector_indexes import index_name
    from engram.settings import get_settings

    def options() -> dict:
        with get_engine().connect() as conn:
            big = conn.execute(text("SELECT c.dataset_id FROM chunks c JOIN datasets d ON d.id = c.dataset_id"
                                    " WHERE d.name = ANY(:n) GROUP BY c.dataset_id HAVING count(*) >= 50"),
                               {"n": list(sizes)}).scalars().all()
            return dict(conn.execute(text("SELECT relname, array_to_string(reloptions, ',') FROM pg_class"
                                          " WHERE relname = ANY(:n)"),
                                     {"n": [index_name("chunks", d) for d in big]}).all())

    built = _bench_module().main([*argv, "--reuse", "--build-only", "--own-index-rows", "50"])
    assert built["own_indexes"]["params"] == (32, 256) and built["own_indexes"]["datasets_indexed"] >= 1
    assert options() and set(options().values()) == {"m=32,ef_construction=256"}
    monkeypatch.setenv("ENGRAM_VECTOR_INDEX_M", "8")
    monkeypatch.setenv("ENGRAM_VECTOR_INDEX_EF_CONSTRUCTION", "20")
    get_settings.cache_clear()
    try:
        tuned = _bench_module().main([*argv, "--reuse", "--build-only", "--own-index-rows", "50"])
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    assert tuned["own_indexes"]["params"] == (8, 20) and set(options()) <= set(tuned["own_indexes"]["rebuilt"])
    assert set(options().values()) == {"m=8,ef_construction=20"} and "rebuilt" in capsys.readouterr().out
