"""`engram recall` and `engram eval` as a user runs them: a real CLI process talking to a real
worker through Redis, over a small remembered corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from engram.models.payloads import RecallResult

DOCS = {
    "lighthouse.md": "The Corran Lighthouse was built in 1871 on Corran Island. Its keeper was Edith Marr.",
    "ferry.md": "Brightwater Ferries runs the ferry from Port Alder to Corran Island. The crossing takes forty minutes.",
    "bridge.md": "The Tessel Harbour Bridge opened in 2008. It carries the coastal railway over the Tessel River.",
}
QA = [
    {"question": "Who was the keeper of the Corran Lighthouse?", "answer": "Edith Marr"},
    {"question": "How long does the ferry crossing to Corran Island take?", "answer": "forty minutes"},
    {"question": "When did the Tessel Harbour Bridge open?", "answer": "2008"},
]


@pytest.fixture(scope="module")
def corpus(worker):
    name = f"cli-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, items=[{"text": t, "name": n} for n, t in DOCS.items()],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(DOCS)
    return name


def _engram(worker, *args: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, ENGRAM_REDIS_URL=worker.redis_url, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "engram.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_recall_prints_ranked_results_with_provenance(worker, corpus):
    out = _engram(worker, "recall", "Who kept the Corran Lighthouse?", "--dataset", corpus, "--type", "CHUNKS",
                  "-k", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("CHUNKS") and f"datasets: {corpus}" in lines[0]
    assert lines[1].startswith(" 1. [chunk]") and "Edith Marr" in lines[1]
    assert f"dataset {corpus}" in lines[2] and "document lighthouse.md" in lines[2] and "chunks " in lines[2]
    assert any(line.startswith(" 2. [chunk]") for line in lines)


def test_recall_json_prints_the_response_model(worker, corpus):
    out = _engram(worker, "recall", "Who kept the Corran Lighthouse?", "-d", corpus, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    result = RecallResult.model_validate_json(out.stdout)
    assert result.routed and result.search_type == "HYBRID_COMPLETION"
    assert result.items[0].provenance.title == "lighthouse.md"


def test_recall_of_an_unknown_dataset_is_a_clear_error(worker):
    out = _engram(worker, "recall", "anything", "-d", f"missing-{uuid.uuid4().hex[:6]}")
    assert out.returncode == 1
    assert "error:" in out.stdout and "does not exist" in out.stdout and "Traceback" not in out.stdout + out.stderr


def test_eval_prints_em_f1_and_answer_in_context_and_writes_a_report(worker, corpus, tmp_path):
    qa_file = tmp_path / "qa.jsonl"
    qa_file.write_text("\n".join(json.dumps(row) for row in QA) + "\n")
    report_path = tmp_path / "report.json"
    out = _engram(worker, "eval", str(qa_file), "--dataset", corpus, "--type", "CHUNKS", "-k", "1",
                  "--out", str(report_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "EM 0.000" in out.stdout and "F1 " in out.stdout
    assert "answer-in-context@1 1.000" in out.stdout  # each answer sits in the top chunk
    report = json.loads(report_path.read_text())
    assert report["metrics"]["count"] == 3 and report["metrics"]["answer_in_context@1"] == 1.0
    assert [q["top_titles"][0] for q in report["questions"]] == ["lighthouse.md", "ferry.md", "bridge.md"]
    assert all(0 < q["f1"] < 1 for q in report["questions"])  # the top chunk holds more than the answer


def test_eval_rejects_a_malformed_qa_file(worker, corpus, tmp_path):
    qa_file = tmp_path / "bad.jsonl"
    qa_file.write_text('{"question": "no answer here"}\n')
    out = _engram(worker, "eval", str(qa_file), "--dataset", corpus)
    assert out.returncode == 1 and "line 1" in out.stdout and "answer" in out.stdout
