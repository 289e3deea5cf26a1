"""Dataset authorisation in recall: two users, two datasets, every search type. No recall of
one user ever returns an item of the other's dataset; an unreadable dataset is an explicit
error, never a silently empty answer."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from engram.models.search import SearchType
from engram.pipelines import ids
from engram.tasks.client import EngramError

# Twin documents: the same shape and words, so a leak would rank high.
ALICE_DOCS = ["Project Heron is led by Mira Holt. Project Heron started in 2019 with a budget of four million crowns.",
              "Mira Holt works at Tidewater Labs. Tidewater Labs builds underwater gliders."]
BOB_DOCS = ["Project Osprey is led by Tomas Reed. Project Osprey started in 2019 with a budget of nine million crowns.",
            "Tomas Reed works at Saltline Labs. Saltline Labs builds underwater gliders."]
TYPES = [t.value for t in SearchType if t is not SearchType.AGENTIC_COMPLETION] + [None]
QUESTIONS = ["Who leads Project Osprey?", '"Project Osprey"', "What happened in 2019?",
             "How is Tomas Reed related to Saltline Labs?"]


@pytest.fixture(scope="module")
def tenants(worker):
    run = uuid.uuid4().hex[:8]
    out = {}
    for who, docs in (("alice", ALICE_DOCS), ("bob", BOB_DOCS)):
        user, dataset = f"{who}-{run}", f"projects-{who}-{run}"
        statuses = worker.client.remember(dataset=dataset, user=user, items=[{"text": d} for d in docs],
                                          background=False, timeout=300)
        assert [s.status for s in statuses] == ["completed"] * len(docs)
        out[who] = {"user": user, "dataset": dataset}
    return out


def _owned_ids(store, dataset_name: str, user: str) -> set[uuid.UUID]:
    """Every chunk, edge and session-source id that lives in the dataset."""
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(dataset_name, user)
        return set(uow.conn.execute(text(
            "SELECT id FROM chunks WHERE dataset_id = :d UNION SELECT id FROM edges WHERE dataset_id = :d"),
            {"d": dataset}).scalars())


def _item_ids(result) -> set[uuid.UUID]:
    return {x for i in result.items for x in (*i.provenance.chunk_ids, *i.provenance.edge_ids)}


def test_no_search_type_returns_an_item_of_another_users_dataset(client, store, tenants):
    alice, bob = tenants["alice"], tenants["bob"]
    bobs = _owned_ids(store, bob["dataset"], bob["user"])
    alices = _owned_ids(store, alice["dataset"], alice["user"])
    checked = 0
    for search_type in TYPES:
        for question in QUESTIONS:
            for datasets in ([alice["dataset"]], []):  # named, and "every dataset I can read"
                result = client.recall(question, datasets=datasets, user=alice["user"], search_type=search_type,
                                       top_k=10)
                found = _item_ids(result)
                assert not found & bobs, (search_type, question)
                assert found <= alices, (search_type, question)
                assert {i.provenance.dataset for i in result.items} <= {alice["dataset"], None}
                assert result.datasets == [alice["dataset"]]
                checked += len(result.items)
    assert checked > 0


def test_sessions_of_another_user_stay_invisible(client, store, tenants):
    alice, bob = tenants["alice"], tenants["bob"]
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(bob["dataset"], bob["user"])
        uow.sessions.add_entry(dataset_id=dataset, session_id="standup", user_id=ids.user_id(bob["user"]),
                               question="What is the Osprey launch code?", answer="osprey-7731")
    result = client.recall("Osprey launch code", datasets=[], user=alice["user"], session_id="standup",
                           search_type="CHUNKS")
    assert "session" not in result.sources
    assert not any("7731" in i.text for i in result.items)


def test_an_unreadable_dataset_is_an_explicit_error(client, store, tenants):
    alice, bob = tenants["alice"], tenants["bob"]
    with pytest.raises(EngramError, match="does not exist for user"):
        client.recall("Who leads Project Osprey?", datasets=[bob["dataset"]], user=alice["user"])
    # Even alongside a readable one: authorisation comes first, nothing is returned.
    with pytest.raises(EngramError, match="does not exist for user"):
        client.recall("Who leads Project Osprey?", datasets=[alice["dataset"], bob["dataset"]], user=alice["user"])
    with store.unit_of_work() as uow:  # bob shares write but not read
        dataset = uow.access.find_dataset(bob["dataset"], bob["user"])
        uow.access.grant(dataset, f"user:{ids.user_id(alice['user'])}", "write")
    with pytest.raises(EngramError, match="no read grant"):
        client.recall("Who leads Project Osprey?", datasets=[bob["dataset"]], user=alice["user"], search_type="CHUNKS")


def test_a_read_grant_opens_the_dataset(client, store, tenants):
    alice, bob = tenants["alice"], tenants["bob"]
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(bob["dataset"], bob["user"])
        uow.access.grant(dataset, f"user:{ids.user_id(alice['user'])}", "read")
    result = client.recall("Who leads Project Osprey?", datasets=[bob["dataset"]], user=alice["user"],
                           search_type="CHUNKS", top_k=1)
    assert "Tomas Reed" in result.items[0].text and result.items[0].provenance.dataset == bob["dataset"]
    with store.unit_of_work() as uow:  # revoke, so test order never matters
        uow.conn.execute(text("DELETE FROM dataset_grants WHERE dataset_id = :d AND principal = :p"),
                         {"d": dataset, "p": f"user:{ids.user_id(alice['user'])}"})


def test_a_user_with_no_readable_dataset_gets_an_error_not_an_empty_answer(client):
    with pytest.raises(EngramError, match="can read no dataset"):
        client.recall("anything at all", datasets=[], user=f"nobody-{uuid.uuid4().hex[:6]}")
