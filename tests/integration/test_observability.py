"""What operators see of a run with a real worker: stage tasks name their dataset and document
in the kwargs Flower shows (never the document's text); `engram worker --metrics-port` serves
every process's metrics (stages, LLM tokens, embeddings, recall, queues)."""

from __future__ import annotations

import ast
import json
import socket
import subprocess
import sys
import threading
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from improve_helpers import wait_until

from engram.pipelines.flows import flow_named

TEXT = "Alice Moreau is the CEO of Harbor Dynamics. The board met in Lyon in March."


@contextmanager
def task_events(app, kinds=("task-received", "task-sent")):
    """The task events the fleet sends while the block runs (what Flower reads), in a list."""
    seen: list[dict] = []
    ready, stop = threading.Event(), threading.Event()

    def receive() -> None:
        with app.connection() as conn:
            recv = app.events.Receiver(conn, handlers={k: seen.append for k in kinds})
            recv.on_consume_ready = lambda *a, **kw: ready.set()
            while not stop.is_set():
                try:
                    recv.capture(limit=None, timeout=1, wakeup=False)
                except (socket.timeout, TimeoutError):
                    continue

    thread = threading.Thread(target=receive, daemon=True)
    thread.start()
    assert ready.wait(30), "the event receiver did not start"
    try:
        yield seen
    finally:
        stop.set()
        thread.join(10)


def test_stage_tasks_name_their_dataset_and_document(worker, client, dataset_name):
    cognify = flow_named("cognify")
    with task_events(worker.app) as seen:
        [status] = client.remember(dataset=dataset_name, items=[{"text": TEXT, "name": "harbor-board.md"}]).wait(
            timeout=300)
        assert status.status == "completed", status
        tasks = {cognify.stage(s.stage).task for s in status.stages if not cognify.stage(s.stage).accepted}
        # a stage's events may arrive after its run's end: wait for each stage's received event
        wait_until(lambda: tasks <= {e["name"] for e in seen if e["type"] == "task-received"
                                     and e["kwargs"].find(str(status.run_id)) >= 0},
                   timeout=60, what="every stage task's received event")
    received = [e for e in seen if e["type"] == "task-received" and e["name"] in tasks
                and str(status.run_id) in e["kwargs"]]
    assert {e["name"] for e in received} == tasks
    for event in received:
        kwargs = ast.literal_eval(event["kwargs"])
        assert kwargs["run_id"] == str(status.run_id)
        assert kwargs["dataset"] == dataset_name and kwargs["document"] == "harbor-board.md"
        assert "Alice" not in event["kwargs"] and "Harbor Dynamics" not in event["kwargs"]


# ------------------------------------------------------------------ metrics


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(port: int) -> dict[tuple[str, frozenset], float]:
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as reply:
        body = reply.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def _sum(samples, name: str, **labels) -> float:
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


@pytest.fixture(scope="module")
def metered(spawn_worker, tmp_path_factory):
    """A worker (prefork pool of 2 + the api worker) serving /metrics, with a replayed LLM that
    reports tokens."""
    cassette = tmp_path_factory.mktemp("llm") / "llm.json"
    graph = {"nodes": [{"id": "a", "name": "Harbor Dynamics", "type": "organization", "description": "a firm"},
                       {"id": "b", "name": "Lyon", "type": "place", "description": "a city"}],
             "edges": [{"source_node_id": "a", "target_node_id": "b", "relationship_name": "located_in"}]}
    cassette.write_text(json.dumps({"version": 1, "entries": [
        {"contains": "", "response_model": "ChunkExtraction",
         "response": {"graph": graph, "summary": {"summary": "About Harbor Dynamics.", "description": "summary"}}},
        {"contains": "", "response_model": "ContradictionList", "response": {"contradictions": []}},
    ]}))
    port = _free_port()
    handle = spawn_worker({"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_METRICS_PORT": str(port)},
                          concurrency=2)
    yield handle, port
    handle.stop()


def test_a_worker_serves_stage_llm_embedding_recall_and_queue_metrics(metered, dataset_name):
    handle, port = metered
    before = _scrape(port)
    assert {dict(ls)["queue"] for n, ls in before if n == "engram_queue_depth"} == set(handle.settings.queues)

    [status] = handle.client.remember(dataset=dataset_name, items=[{"text": TEXT, "name": "harbor-board.md"}]).wait(
        timeout=300)
    assert status.status == "completed", status
    handle.client.recall("Who is the CEO of Harbor Dynamics?", datasets=[dataset_name], search_type="CHUNKS")
    # The same text in another dataset: its vectors are stored already (reused, not embedded).
    [again] = handle.client.remember(dataset=dataset_name + "-copy", items=[{"text": TEXT, "name": "copy.md"}]).wait(
        timeout=300)
    assert again.status == "completed", again
    after = _scrape(port)

    cognify = flow_named("cognify")
    for stage in status.stages:
        if cognify.stage(stage.stage).accepted:
            continue
        assert _sum(after, "engram_stage_duration_seconds_count", flow="cognify", stage=stage.stage,
                    status=stage.status, dataset=dataset_name) >= 1, stage
        assert _sum(after, "engram_stage_duration_seconds_sum", flow="cognify", stage=stage.stage,
                    dataset=dataset_name) > 0
    assert _sum(after, "engram_llm_calls_total", dataset=dataset_name, model="replay:llm.json") >= 1
    assert _sum(after, "engram_llm_prompt_tokens_total", dataset=dataset_name) > len(TEXT) / 8
    assert _sum(after, "engram_llm_completion_tokens_total", dataset=dataset_name) > 0
    assert _sum(after, "engram_embedding_texts_total", outcome="embedded") > _sum(
        before, "engram_embedding_texts_total", outcome="embedded")
    assert _sum(after, "engram_embedding_texts_total", outcome="reused") > _sum(
        before, "engram_embedding_texts_total", outcome="reused")
    assert _sum(after, "engram_recall_duration_seconds_count", search_type="CHUNKS", dataset=dataset_name,
                status="ok") == 1
