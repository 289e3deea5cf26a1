"""Forget leaves no copy: every text, jsonb and array column of every table is searched, and
every value of every Redis database (task results, queued messages, Engram's own keys).
test_capture.py forgets a linked capture: its id leaves other runs' stage outputs, task
results and the task events a Flower-like receiver got."""

from __future__ import annotations

import base64
import json

from sqlalchemy import text

from engram.settings import get_settings
from engram.tasks.client import RunHandle
from engram.tests.integration.improve_helpers import fully_processed, wait_until

KEEP = "Kestrelmoor Ferries is located in Port Alder. Kestrelmoor Ferries runs the Oxbridle line."
DROP = ("Quorvath Lindqvist founded Zephyrine Mills in 1987. Zephyrine Mills is located in Port Alder. "
        "Quorvath Lindqvist is the chief of Zephyrine Mills.")
DROP_MARKERS = ("quorvath", "zephyrine")
KEEP_MARKERS = ("kestrelmoor", "oxbridle")


def copies(store, markers: tuple[str, ...]) -> list[str]:
    """`table.column` for every column anywhere in the schema whose text holds a marker."""
    with store.unit_of_work() as uow:
        columns = uow.conn.execute(text(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND (data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'tsvector')"
            " OR udt_name IN ('varchar', 'text', 'jsonb', '_text'))")).all()
        found = []
        for table, column in columns:
            hit = uow.conn.execute(text(
                f'SELECT count(*) FROM "{table}" WHERE lower(CAST("{column}" AS text)) LIKE ANY(:m)'),
                {"m": [f"%{m}%" for m in markers]}).scalar_one()
            if hit:
                found.append(f"{table}.{column}")
        return found


def _texts(raw: bytes) -> list[str]:
    """A Redis value as text, with kombu's base64 message bodies decoded."""
    out = [raw.decode("utf-8", "replace")]
    try:
        message = json.loads(raw)
    except ValueError:
        return out
    if isinstance(message, list) and message and isinstance(message[0], dict):  # an unacked entry
        message = message[0]
    if isinstance(message, dict) and isinstance(message.get("body"), str):
        try:
            out.append(base64.b64decode(message["body"]).decode("utf-8", "replace"))
        except ValueError:
            pass
    return out


def redis_copies(services, markers: tuple[str, ...]) -> list[str]:
    """`db/key` of every Redis value (any type, any database) whose text holds a marker."""
    import redis

    found = []
    for db in range(16):
        r = redis.Redis.from_url(services.redis_url.rsplit("/", 1)[0] + f"/{db}")
        for key in r.scan_iter(count=1000):
            kind = r.type(key).decode()
            values = {"string": lambda k: [r.get(k)], "list": lambda k: r.lrange(k, 0, -1),
                      "hash": lambda k: [*r.hvals(k)], "set": lambda k: [*r.smembers(k)],
                      "zset": lambda k: r.zrange(k, 0, -1)}.get(kind, lambda k: [])(key)
            if any(m in t.lower() for v in values if v for t in _texts(v) for m in markers):
                found.append(f"{db}/{key.decode()}")
    return found


def test_forget_an_item_leaves_no_copy_and_tombstones_its_run(client, store, dataset_name, services):
    [kept, dropped] = client.remember(dataset=dataset_name, items=[{"text": KEEP}, {"text": DROP}], background=False)
    assert kept.status == dropped.status == "completed"
    with store.unit_of_work() as uow:
        drop_chunks = uow.conn.execute(text(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.data_item_id = :i"),
            {"i": dropped.data_item_id}).scalars().all()
    # A session answer citing the item; the automatic improve turns it into a document of its own.
    client.remember_turn(dataset=dataset_name, session_id="s1", question="Who founded Zephyrine Mills?",
                         answer="Quorvath Lindqvist founded Zephyrine Mills.", source_chunk_ids=drop_chunks)
    client.remember_turn(dataset=dataset_name, session_id="s2", question="Where is Kestrelmoor?",
                         answer="Kestrelmoor Ferries is in Port Alder.")
    wait_until(lambda: fully_processed(store, dataset_name, "s1") and fully_processed(store, dataset_name, "s2"),
               what="session documents cognified")
    before = copies(store, DROP_MARKERS)
    assert {"data_items.content", "chunks.text", "stage_runs.output", "session_entries.answer"} <= set(before)
    # A bare producer that never forgets its results: a recall quoting the item stays in Redis.
    answer = client.app.send_task("engram.recall", kwargs={"question": "Who founded Zephyrine Mills?",
                                                           "datasets": [dataset_name], "search_type": "CHUNKS_LEXICAL"})
    answer.get(timeout=120)
    assert redis_copies(services, DROP_MARKERS)
    # ... though only for a short while (set just after the result is stored).
    ttl = client.app.backend.client.ttl
    wait_until(lambda: 0 < ttl(f"celery-task-meta-{answer.id}") <= get_settings().short_result_ttl_seconds,
               what="the answer's short TTL")

    result = client.forget(dataset_name, data_item_id=dropped.data_item_id)

    assert copies(store, DROP_MARKERS) == []
    assert redis_copies(services, DROP_MARKERS) == []
    assert result.items == 2 and result.session_entries == 1 and result.runs == 2  # the item and its QA document
    assert client.run_status(dropped.run_id).status == "forgotten"
    status = client.run_status(kept.run_id)
    assert status.status == "completed" and status.stages[1].status == "completed"
    assert set(copies(store, KEEP_MARKERS)) >= {"data_items.content", "chunks.text", "session_entries.answer"}
    answer = client.recall("Where is Kestrelmoor Ferries?", datasets=[dataset_name], search_type="CHUNKS_LEXICAL")
    assert answer.items and "Kestrelmoor" in answer.items[0].text


def test_forget_a_dataset_leaves_nothing_of_it(client, store, dataset_name, services):
    texts = [KEEP.replace("Kestrelmoor", "Vellichor"), DROP.replace("Quorvath", "Tamsworthy")]
    client.remember(dataset=dataset_name, items=[{"text": t} for t in texts], background=False)
    # A bare producer's accept: its result (with the payload) stays in Redis until forgotten.
    accepted = client.app.send_task("engram.remember", kwargs={"dataset": dataset_name,
                                                               "items": [{"text": texts[1] + " Again."}]}).get(timeout=120)
    RunHandle(client, accepted["runs"][0]["run_id"]).wait(timeout=300)
    client.remember_turn(dataset=dataset_name, session_id="s1", question="Where is Oxbridle?", answer="Vellichor")
    wait_until(lambda: fully_processed(store, dataset_name, "s1"), what="session improved")
    assert copies(store, ("vellichor", "tamsworthy"))

    result = client.forget(dataset_name)

    assert result.items >= 2
    assert copies(store, ("vellichor", "tamsworthy")) == []
    assert redis_copies(services, ("vellichor", "tamsworthy")) == []
    assert all(r.status == "forgotten" for r in client.dataset_status(dataset_name))
