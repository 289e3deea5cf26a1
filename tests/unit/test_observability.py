"""Metrics and traces without services: what a stage, an LLM call and a recall record, and that
importing Engram starts no metrics server and no tracing."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from types import SimpleNamespace

import pytest
from celery.exceptions import Ignore, Retry
from prometheus_client import REGISTRY

from engram.adapters import metrics, tracing
from engram.adapters.llm.gateway import LLMGateway
from engram.adapters.llm.providers import Reply
from engram.tasks.observe import observed_recall, observed_stage


def _value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _task(retries: int = 0):
    return SimpleNamespace(request=SimpleNamespace(retries=retries))


class _Provider:
    generates = True

    def __init__(self, name: str, fail: bool = False):
        self.name, self.fail = name, fail

    def call(self, messages, response_model, subject):
        if self.fail:
            raise RuntimeError("provider down")
        return Reply("an answer", 120, 7)


def test_llm_calls_and_tokens_count_by_model_and_the_running_stages_dataset():
    labels = {"model": "replay:cassette.json", "dataset": "ds-llm"}
    calls, prompt = _value("engram_llm_calls_total", **labels), _value("engram_llm_prompt_tokens_total", **labels)
    gateway = LLMGateway(_Provider("replay:/some/where/cassette.json"))
    assert gateway.model_label == "replay:cassette.json"  # a cassette's path is no label
    with metrics.dataset_label("ds-llm"):
        gateway.complete([{"role": "user", "content": "hello"}])
    assert _value("engram_llm_calls_total", **labels) == calls + 1
    assert _value("engram_llm_prompt_tokens_total", **labels) == prompt + 120
    assert _value("engram_llm_completion_tokens_total", **labels) >= 7
    failing = LLMGateway(_Provider("gpt-test", fail=True))
    with metrics.dataset_label("ds-llm"), pytest.raises(RuntimeError):
        failing.complete([{"role": "user", "content": "hello there"}])
    assert _value("engram_llm_calls_total", model="gpt-test", dataset="ds-llm") == 1  # a failed call is a call
    assert metrics.current_dataset() == ""  # the label ends with its block


@pytest.mark.parametrize("outcome, status", [
    (lambda: {"status": "skipped"}, "skipped"),
    (lambda: {"status": "completed", "tokens": 12}, "completed"),
    (lambda: {"status": "completed", "redelivered": True}, "redelivered"),
    (Retry, "retrying"),
    (Ignore, "deferred"),
    (ValueError, "error"),
])
def test_a_stage_task_counts_by_flow_stage_status_and_dataset(outcome, status):
    labels = {"flow": "cognify", "stage": "chunk", "status": status, "dataset": "ds-stage"}
    before = _value("engram_stage_duration_seconds_count", **labels)

    def body():
        if isinstance(outcome, type):
            raise outcome()
        assert metrics.current_dataset() == "ds-stage"  # LLM calls inside are labelled with it
        return outcome()

    run_id = uuid.uuid4()
    if isinstance(outcome, type):
        with pytest.raises(outcome):
            observed_stage(_task(), "cognify", "chunk", run_id, "ds-stage", "a.md", body)
    else:
        assert observed_stage(_task(), "cognify", "chunk", run_id, "ds-stage", "a.md", body) == outcome()
    assert _value("engram_stage_duration_seconds_count", **labels) == before + 1


def test_a_recall_counts_by_the_search_type_it_took():
    labels = {"search_type": "CHUNKS", "dataset": "a,b", "status": "ok"}
    before = _value("engram_recall_duration_seconds_count", **labels)
    observed_recall(None, ["b", "a"], lambda: {"search_type": "CHUNKS", "items": []})
    assert _value("engram_recall_duration_seconds_count", **labels) == before + 1
    with pytest.raises(KeyError):
        observed_recall("GRAPH_COMPLETION", ["a"], lambda: {}["boom"])
    assert _value("engram_recall_duration_seconds_count", search_type="GRAPH_COMPLETION", dataset="a",
                  status="error") == 1


def test_embedding_counts_embedded_and_reused_texts():
    before = _value("engram_embedding_texts_total", model="m", outcome="reused")
    metrics.count_embedding("m", embedded=3, reused=2)
    assert _value("engram_embedding_texts_total", model="m", outcome="reused") == before + 2
    assert _value("engram_embedding_texts_total", model="m", outcome="embedded") >= 3


def test_a_scrape_gauge_that_cannot_read_answers_empty():
    def broken():
        raise ConnectionError("database down")

    [family] = list(metrics.Gauges("engram_queue_depth", "depth", ["queue"], broken).collect())
    assert family.samples == []
    [family] = list(metrics.Gauges("engram_queue_depth", "depth", ["queue"], lambda: {("llm",): 4}).collect())
    assert [(s.labels, s.value) for s in family.samples] == [({"queue": "llm"}, 4)]


def test_tracing_is_off_unless_configured():
    assert tracing.configure(SimpleNamespace(otlp_endpoint=None, otel_service_name="engram")) is False
    assert not tracing.enabled()
    tracing.annotate({"engram.dataset": "x"})  # a no-op, not an error
    assert tracing._traces_url("http://collector:4318/") == "http://collector:4318/v1/traces"
    assert tracing._traces_url("http://c:4318/v1/traces") == "http://c:4318/v1/traces"


_IMPORT = r"""
import json, sys, threading
import engram.celery_app, engram.tasks.engine, engram.tasks.recall, engram.tasks.observe, engram.cli.worker
import engram.adapters.metrics, engram.adapters.tracing, engram.adapters.llm.gateway
from opentelemetry import trace
print(json.dumps({"prometheus": "prometheus_client" in sys.modules, "threads": threading.active_count(),
                  "provider": type(trace.get_tracer_provider()).__name__}))
"""


def test_importing_engram_starts_no_metrics_server_and_no_tracing(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("ENGRAM_", "PROMETHEUS_"))}
    env["ENGRAM_STATE_DIR"] = str(tmp_path / "state")
    out = subprocess.run([sys.executable, "-c", _IMPORT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found == {"prometheus": False, "threads": 1, "provider": "ProxyTracerProvider"}


def test_prepare_multiprocess_empties_the_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    directory = tmp_path / "metrics"
    directory.mkdir()
    (directory / "counter_123.db").write_bytes(b"stale")
    from prometheus_client import values

    saved = values.ValueClass
    try:
        metrics.prepare_multiprocess(directory)
        assert list(directory.iterdir()) == []
        assert __import__("os").environ["PROMETHEUS_MULTIPROC_DIR"] == str(directory)
        assert values.ValueClass is not saved  # values made from now on go to the directory
    finally:
        values.ValueClass = saved
