"""Task events (what Flower shows) carry ids and counts, never memory text; forget drops other
runs' references to what it removed."""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace

from kombu.utils.json import dumps, loads

from engram.adapters.store.forget import drop_references
from engram.adapters.task_events import RedactedRequest, Reply, exception_summary, summary_repr

SECRET = "Quorvath Lindqvist founded Zephyrine Mills in 1987."
RUN = "2b0c8f9e-1111-2222-3333-444455556666"
ITEM = "9d3e1a77-aaaa-bbbb-cccc-ddddeeeeffff"


def test_a_summary_keeps_routing_ids_and_counts_and_no_text():
    payload = {"dataset": "kb", "user": "ana", "run_id": RUN, "items": [{"text": SECRET, "name": "notes.md"}] * 7,
               "question": SECRET, "data_item_id": ITEM, "top_k": 5, "background": True,
               "datasets": ["kb", "other"], "session_id": "s1", "search_type": "CHUNKS"}
    shown = summary_repr(payload)
    assert "quorvath" not in shown.lower() and ITEM not in shown and "notes.md" not in shown
    for kept in ("'kb'", "'ana'", RUN, "'other'", "'s1'", "'CHUNKS'", "'top_k': 5", "'background': True",
                 "'<2 more>'", "'<text:51>'", "'<id>'"):
        assert kept in shown, kept
    # A routing key does not carry long text either.
    assert "quorvath" not in summary_repr({"dataset": SECRET * 3}).lower()


def test_a_reply_is_stored_as_its_value_and_shown_as_its_summary():
    answer = {"items": [{"kind": "chunk", "text": SECRET, "score": 0.9}], "dataset": "kb"}
    reply = Reply(answer)
    assert loads(dumps({"status": "SUCCESS", "result": reply}))["result"] == answer  # the backend's encoding
    assert "quorvath" not in repr(reply).lower() and "'score': 0.9" in repr(reply) and "'kb'" in repr(reply)
    assert exception_summary(f"BadInput('{SECRET}')") == "BadInput(...)"


def test_engrams_messages_name_ids_not_text_in_their_headers_and_sent_event():
    from engram.celery_app import app

    message = app.amqp.as_task_v2(str(uuid.uuid4()), "engram.recall", (SECRET,),
                                  {"question": SECRET, "datasets": ["kb"], "user": "ana"}, create_sent_event=True)
    shown = json.dumps([message.headers["argsrepr"], message.headers["kwargsrepr"], message.sent_event])
    assert "quorvath" not in shown.lower() and "'kb'" in shown and "<text:51>" in shown
    # A caller's own reprs stand.
    mine = app.amqp.as_task_v2(str(uuid.uuid4()), "engram.recall", (), {"question": SECRET}, kwargsrepr="{...}")
    assert mine.headers["kwargsrepr"] == "{...}"


def test_a_worker_request_summarises_a_bare_producers_headers_and_failures():
    sent = []
    request = object.__new__(RedactedRequest)
    request._args, request._kwargs = [SECRET], {"question": SECRET, "datasets": ["kb"]}
    request._eventer = SimpleNamespace(enabled=True, send=lambda type, **fields: sent.append((type, fields)))
    request._task = SimpleNamespace(send_events=True)
    request.id = "t1"
    assert "quorvath" not in (request.argsrepr + request.kwargsrepr).lower() and "'kb'" in request.kwargsrepr
    request.send_event("task-failed", exception=f"BadInput('{SECRET}')", traceback=f"Traceback: {SECRET}")
    request.send_event("task-succeeded", result={"answer": SECRET, "count": 2}, runtime=0.1)
    assert "quorvath" not in json.dumps(sent).lower()
    assert sent[0][1]["exception"] == "BadInput(...)" and sent[1][1]["result"] == "{'answer': '<text:51>', 'count': 2}"


def test_forget_drops_other_runs_references_to_removed_ids():
    kept, gone = str(uuid.uuid4()), str(uuid.uuid4())
    link = {"entities": [{"name": "Kafka", "type": "technology"}],
            "edges": [{"source": kept, "target": gone.upper(), "predicate": "causedBy"},
                      {"source": kept, "target": RUN, "predicate": "mentions"}],
            "rejected": [{"from_id": kept, "to_id": gone, "reason": "low confidence"}], "candidates": 3,
            "object_id": gone, "by_id": {gone: 1, kept: 2}, "note": f"linked to {gone}"}
    out = drop_references(link, {gone})
    assert gone not in json.dumps(out).lower()
    assert out == {"entities": [{"name": "Kafka", "type": "technology"}],
                   "edges": [{"source": kept, "target": RUN, "predicate": "mentions"}], "rejected": [],
                   "candidates": 3, "by_id": {kept: 2}}
    assert drop_references(link, set()) == link and drop_references(gone, {gone}) is None
