"""ACL matrix: every public task × {owner, other user, unknown user, read-shared user} ×
{read, write, delete}; every internal task called by a bare producer. Refused calls leak
nothing and write nothing; the owner (and the read-shared user for reads) is served."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from celery import Celery
from sqlalchemy import text

from engram.tasks.client import EngramError

# Every table that holds something of a dataset (a refused call changes none of its rows).
BY_DATASET = ["datasets", "dataset_grants", "data_items", "documents", "chunks", "entities", "edges", "summaries",
              "pipeline_runs", "session_entries", "session_improve_state", "dataset_improve_state",
              "improve_claims", "triplet_embeddings"]


def fingerprint(store, dataset: uuid.UUID) -> str:
    digest = hashlib.sha256()
    queries = [f"SELECT md5(CAST(t.* AS text)) FROM {table} t WHERE {'id' if table == 'datasets' else 'dataset_id'}"
               " = :d ORDER BY 1" for table in BY_DATASET]
    queries += ["SELECT md5(CAST(t.* AS text)) FROM users t ORDER BY 1",
                "SELECT md5(CAST(s.* AS text)) FROM stage_runs s JOIN pipeline_runs r ON r.id = s.run_id"
                " WHERE r.dataset_id = :d ORDER BY 1"]
    with store.unit_of_work() as uow:
        for query in queries:
            digest.update(query.encode() + "".join(uow.conn.execute(text(query), {"d": dataset}).scalars()).encode())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def world(worker):
    from engram.adapters.store import Store

    run = uuid.uuid4().hex[:8]
    owner, other, ghost, reader = f"alice-{run}", f"bob-{run}", f"ghost-{run}", f"carol-{run}"
    name = f"acl-{run}"
    client = worker.client
    [first, spare] = client.remember(dataset=name, user=owner, background=False, items=[
        {"text": "Mira Holt leads Project Heron at Tidewater Labs."},
        {"text": "Tidewater Labs is located in Port Alder."}])
    client.remember(dataset=f"own-{run}", user=other, content="Bob keeps his own notes.", background=False)
    client.share(name, reader, ["read"], user=owner)
    turn = client.remember_turn(dataset=name, user=owner, session_id="s1", question="Who leads Heron?",
                                answer="Mira Holt")
    store = Store()
    from engram.tests.integration.improve_helpers import fully_processed, runs, wait_until

    wait_until(lambda: fully_processed(store, name, "s1"), what="session improved")
    improve_run = runs(store, name, "s1")[-1]["id"]
    with store.unit_of_work() as uow:
        dataset = uow.access.find_own(name, owner)
    return {"dataset": dataset, "owner": owner, "other": other, "ghost": ghost, "reader": reader, "name": name, "run": first.run_id,
            "spare_item": spare.data_item_id, "entry": turn.entry_id, "improve_run": improve_run}


def calls(w: dict) -> list[tuple[str, str, dict]]:
    """(task, operation, payload without user). Operation is the grant the call needs."""
    n = w["name"]
    return [
        ("engram.status", "read", {"run_id": str(w["run"])}),
        ("engram.status", "read", {"dataset": n}),
        ("engram.recall", "read", {"question": "Who leads Project Heron?", "datasets": [n],
                                   "search_type": "CHUNKS_LEXICAL"}),
        ("engram.sessions", "read", {"dataset": n}),
        ("engram.improve.run_status", "read", {"run_id": str(w["improve_run"])}),
        ("engram.export", "read", {"dataset": n, "limit": 5}),
        ("engram.remember", "write", {"dataset": n, "items": [{"text": "Injected by an intruder."}]}),
        ("engram.remember", "write", {"dataset": n, "session_id": "s1", "question": "q", "answer": "intruder"}),
        ("engram.cognify", "write", {"run_id": str(w["run"])}),
        ("engram.feedback", "write", {"entry_id": str(w["entry"]), "feedback": "harmful"}),
        ("engram.improve", "write", {"dataset": n, "session_ids": ["s1"]}),
        ("engram.maintenance.check_contradictions", "write", {"dataset": n}),
        ("engram.maintenance.supersede", "write", {"dataset": n, "functional_relationships": {"leads": "target"}}),
        ("engram.share", "share", {"dataset": n, "grantee": w["other"], "permissions": ["write"]}),
        ("engram.unshare", "share", {"dataset": n, "grantee": w["reader"], "permissions": ["read"]}),
        ("engram.forget", "delete", {"dataset": n, "data_item_id": str(w["spare_item"])}),
        ("engram.forget", "delete", {"dataset": n}),
    ]


def test_public_tasks_serve_only_the_grant_holders(worker, store, world):
    client = worker.client
    refused, served, leaks, writes = 0, 0, [], []
    for task, operation, payload in calls(world):
        for role in ("other", "ghost", "reader"):
            allowed = role == "reader" and operation == "read"
            before = fingerprint(store, world['dataset'])
            try:
                answer = client.call(task, user=world[role], **payload)
            except EngramError as exc:
                if allowed:
                    raise
                refused += 1
                assert "grant" in str(exc) or "does not exist" in str(exc), f"{task} as {role}: {exc}"
            else:
                if not allowed:
                    leaks.append((task, role, str(answer)[:200]))
                served += 1
            if not allowed and fingerprint(store, world['dataset']) != before:
                writes.append((task, role))
    # The owner is served everything (destructive calls last: forget is the final entry).
    for task, _, payload in calls(world):
        client.call(task, user=world["owner"], **payload)
        served += 1
    print(f"\nACL MATRIX refused={refused} served={served} leaks={len(leaks)} unauthorised_writes={len(writes)}")
    assert leaks == [] and writes == []
    reads = sum(operation == "read" for _, operation, _ in calls(world))
    assert refused == 3 * len(calls(world)) - reads  # the reader's reads are served


def _internal_tasks(app) -> list[str]:
    app.loader.import_default_modules()  # the task modules (include=...) register on import
    from engram.celery_app import PUBLIC_TASKS

    return sorted(n for n in app.tasks if n.startswith("engram.") and n not in PUBLIC_TASKS)


def test_internal_tasks_refuse_a_bare_producer(worker, store, world):
    bare = Celery(broker=worker.redis_url, backend=worker.redis_url)
    with store.unit_of_work() as uow:
        dataset = uow.access.find_own(world["name"], world["owner"])
    guesses = {"run_id": str(world["run"]), "dataset_id": str(dataset), "session_ids": ["s1"],
               "run_ids": [str(world["run"])], "trigger": "explicit"}
    names = _internal_tasks(worker.app)
    assert len(names) >= 10, names
    before = fingerprint(store, world['dataset'])
    refused = []
    for name in names:
        queue = worker.app.amqp.router.route({}, name)["queue"].name
        result = bare.send_task(name, kwargs=guesses, queue=queue, headers={"engram_sig": "0" * 64})
        with pytest.raises(Exception, match="not produced by Engram") as caught:
            result.get(timeout=60)
        refused.append((name, type(caught.value).__name__))
        unsigned = bare.send_task(name, kwargs={}, queue=queue)
        with pytest.raises(Exception, match="not produced by Engram"):
            unsigned.get(timeout=60)
    print(f"\nINTERNAL refused={len(refused)} of {len(names)}")
    assert fingerprint(store, world['dataset']) == before
