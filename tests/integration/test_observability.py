"""What operators see of a run with a real worker: stage tasks name their dataset and document
in the kwargs Flower shows (never the document's text)."""

from __future__ import annotations

import ast
import socket
import threading
from contextlib import contextmanager

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
