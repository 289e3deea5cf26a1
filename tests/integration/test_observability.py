"""What operators see of a run with a real worker: stage tasks name their dataset and document
in the kwargs Flower shows (never the document's text); `engram worker --metrics-port` serves
every process's metrics (stages, LLM tokens, embeddings, recall, queues); one remember and its
stage chain are one OpenTelemetry trace; `engram flower` guards /metrics like its pages."""

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


# ------------------------------------------------------------------ traces


@pytest.fixture
def traced(spawn_worker, tmp_path):
    """A worker process (threads) whose spans go to the SDK's in-memory exporter; yields the
    handle and a function that stops it and returns its spans."""
    handle = spawn_worker({}, 4, start=False)  # its own broker database; started below, traced
    spans_file, name = tmp_path / "spans.json", f"tr{uuid.uuid4().hex[:6]}"
    log = open(handle.log_path, "ab")
    handle.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("traced_worker.py")),
                                    str(spans_file), name], env=handle.env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)

    def answers() -> bool:
        if handle.proc.poll() is not None:
            raise RuntimeError(f"traced worker exited; log:\n{handle.log_path.read_text()[-3000:]}")
        return any(name in node for reply in handle.app.control.ping(timeout=0.5) or [] for node in reply)

    wait_until(answers, timeout=600, what="the traced worker's ping")

    def spans() -> list[dict]:
        handle.stop()
        return json.loads(spans_file.read_text())

    try:
        yield handle, spans
    finally:
        handle.stop()


def test_one_remember_and_its_stage_chain_are_one_trace(traced, dataset_name):
    handle, stop = traced
    [status] = handle.client.remember(dataset=dataset_name, items=[{"text": TEXT, "name": "harbor-board.md"}]).wait(
        timeout=300)
    assert status.status == "completed", status
    spans = stop()
    runs = {s["name"].removeprefix("run/"): s for s in spans if s["name"].startswith("run/")}
    cognify = flow_named("cognify")
    stages = [cognify.stage(s.stage) for s in status.stages if not cognify.stage(s.stage).accepted]
    assert {"engram.remember", *(s.task for s in stages)} <= set(runs), sorted(runs)
    assert "engram.cognify.embed_and_load" in runs
    # one trace: the remember task's span is the root, every stage's span descends from it (the
    # client's status polls, sent by an uninstrumented producer, are traces of their own)
    trace = runs["engram.remember"]["trace_id"]
    assert {s["name"] for s in spans if s["trace_id"] != trace} <= {"run/engram.status"}
    by_id = {s["span_id"]: s for s in spans}
    for stage in stages:
        span, hops = runs[stage.task], 0
        while span["parent_id"] in by_id:
            span, hops = by_id[span["parent_id"]], hops + 1
        assert span is runs["engram.remember"] and hops >= 2, stage.name  # via the publishing span
        attrs = runs[stage.task]["attributes"]
        assert attrs["engram.run_id"] == str(status.run_id) and attrs["engram.dataset"] == dataset_name
        assert attrs["engram.document"] == "harbor-board.md" and attrs["engram.stage"] == stage.name
        assert attrs["engram.status"] == "completed" and attrs["engram.retries"] == 0
        assert isinstance(attrs["engram.tokens"], int)


class _Collector:
    """A minimal OTLP/HTTP trace receiver: the spans every POST to /v1/traces carried."""

    def __init__(self):
        import gzip
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        spans = self.spans = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            attrs = {a.key: a.value.string_value or a.value.int_value for a in span.attributes}
                            spans.append({"name": span.name, "trace_id": span.trace_id.hex(), "attributes": attrs,
                                          "path": self.path})
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_a_prefork_worker_sends_its_spans_to_the_configured_otlp_endpoint(worker_factory, dataset_name):
    collector = _Collector()
    try:
        handle = worker_factory({"ENGRAM_OTLP_ENDPOINT": collector.url}, concurrency=2)
        [status] = handle.client.remember(dataset=dataset_name, items=[{"text": TEXT, "name": "harbor-board.md"}]
                                          ).wait(timeout=300)
        assert status.status == "completed", status
        wait_until(lambda: any(s["name"] == "run/engram.cognify.embed_and_load" for s in collector.spans),
                   timeout=120, what="the load stage's span at the collector")
        runs = {s["name"]: s for s in collector.spans if s["name"].startswith("run/")}
        load = runs["run/engram.cognify.embed_and_load"]
        assert load["trace_id"] == runs["run/engram.remember"]["trace_id"]  # the api worker's and the pool's
        assert load["attributes"]["engram.dataset"] == dataset_name
        assert load["attributes"]["engram.document"] == "harbor-board.md"
        assert {s["path"] for s in collector.spans} == {"/v1/traces"}
    finally:
        collector.server.shutdown()


def test_the_backlog_gauge_counts_unfinished_runs_by_flow_and_status(store, dataset_name, services):
    from sqlalchemy import text

    from engram.tasks.observe import fleet_gauges

    backlog = next(g for g in fleet_gauges() if g.name == "engram_run_backlog")
    before = backlog.read().get(("capture", "pending"), 0)
    run_id = uuid.uuid4()
    with store.unit_of_work() as uow:
        dataset = uow.access.create_dataset("default", dataset_name)
        uow.runs.create(run_id, "capture", ["normalize"], dataset)
    try:
        assert backlog.read()[("capture", "pending")] == before + 1
        [family] = list(backlog.collect())
        assert {"flow": "capture", "status": "pending"} in [s.labels for s in family.samples]
    finally:
        with store.unit_of_work() as uow:
            uow.conn.execute(text("DELETE FROM pipeline_runs WHERE id = :r"), {"r": run_id})


def test_engram_flower_answers_metrics_only_with_its_credentials(worker, tmp_path):
    import base64
    import urllib.error

    port = _free_port()
    env = dict(worker.env, FLOWER_BASIC_AUTH="ops:s3cret")
    log = open(tmp_path / "flower.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "engram.cli", "flower", f"--port={port}", "--address=127.0.0.1"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def get(path: str, credentials: str | None = None) -> int:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
        if credentials:
            request.add_header("Authorization", "Basic " + base64.b64encode(credentials.encode()).decode())
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def up() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"flower exited; log:\n{(tmp_path / 'flower.log').read_text()[-3000:]}")
        try:
            return get("/healthcheck") == 200
        except OSError:
            return False

    try:
        wait_until(up, timeout=120, what="flower's healthcheck")
        assert get("/metrics") == 401
        assert get("/metrics", "ops:wrong") == 401
        assert get("/metrics", "ops:s3cret") == 200
        assert get("/", None) == 401  # the same guard as its pages
    finally:
        proc.terminate()
        proc.wait(30)
