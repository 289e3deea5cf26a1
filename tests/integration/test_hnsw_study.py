"""bench/hnsw_study.py at a tiny size on pgvector: the generators' statistics and, per HNSW
build, recall@10 against the exact top 10 with the SQL's latency; the scratch table is gone after."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from sqlalchemy import text

BENCH = Path(__file__).resolve().parents[2] / "bench" / "hnsw_study.py"


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_hnsw_study", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_study_compares_generators_and_builds_on_pgvector(services, tmp_path, capsys):
    figures = _bench_module().main(["--real", "120", "--per", "4", "--questions", "12", "--params", "8/32,16/64",
                                    "--ef", "10,40", "--engine", "pgvector", "--cache", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "real sample: 120 chunks" in printed and "pgvector M 16 ef_construction 64" in printed
    assert set(figures["generators"]) == {"iso", "gauss"}
    iso, gauss = figures["generators"]["iso"], figures["generators"]["gauss"]
    # The shells: every real vector is nearer a question than its synthetic ones, so the exact top 10
    # is nearly all real rows (a quarter of the rows here); the Gaussian generator mixes them.
    assert iso["real_share_of_top10"] > 0.8 > gauss["real_share_of_top10"] and iso["real_share_of_rows"] == 0.25
    for found in (iso, gauss):
        assert [(b["m"], b["ef_construction"]) for b in found["pgvector"]] == [(8, 32), (16, 64)]
        for build in found["pgvector"]:
            assert set(build["recall_at_10"]) == {10, 40} and all(0 < r <= 1 for r in build["recall_at_10"].values())
            assert all(0 < p50 <= p95 for p50, p95 in build["p50_p95_ms"].values())
    saved = sorted((BENCH.parent / "results").glob("hnsw-study-*.json"))[-1]
    assert json.loads(saved.read_text())["generators"]["iso"]["real_share_of_rows"] == 0.25
    saved.unlink()
    from engram.adapters.store.engine import get_engine

    with get_engine().connect() as conn:
        assert conn.execute(text("SELECT to_regclass('hnsw_study_vectors')")).scalar_one() is None
