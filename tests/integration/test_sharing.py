"""Sharing: share/unshare (share grant needed), own-first names, read-only grantees write nothing."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from engram.models.payloads import RecallRequest
from engram.tasks.client import EngramError


@pytest.fixture
def people(client):
    run = uuid.uuid4().hex[:8]
    alice, bob, eve = f"alice-{run}", f"bob-{run}", f"eve-{run}"
    name = f"kb-{run}"
    client.remember("Mira Holt leads Project Heron at Tidewater Labs.", dataset=name, user=alice,
                    background=False)
    return alice, bob, eve, name


def _entries(store, owner: str, name: str) -> int:
    with store.unit_of_work() as uow:
        dataset = uow.access.find_own(name, owner)
        return uow.conn.execute(text("SELECT count(*) FROM session_entries WHERE dataset_id = :d"),
                                {"d": dataset}).scalar_one()


def test_owner_shares_and_unshares_and_nobody_else_can(client, store, people):
    alice, bob, eve, name = people
    with pytest.raises(EngramError, match="does not exist for user"):
        client.recall("Who leads Project Heron?", datasets=[name], user=bob)
    with pytest.raises(EngramError, match="does not exist for user"):  # not shared yet: eve cannot share it
        client.share(name, bob, user=eve)

    assert client.share(name, bob, ["read"], user=alice)["permissions"] == ["read"]
    answer = client.recall("Who leads Project Heron?", datasets=[name], user=bob, search_type="CHUNKS_LEXICAL")
    assert "Mira Holt" in answer.items[0].text
    with pytest.raises(EngramError, match="has no write grant"):
        client.remember("Bob was here.", dataset=name, user=bob, create_dataset=False)
    with pytest.raises(EngramError, match="has no share grant"):  # read does not pass the data on
        client.share(name, eve, user=bob)
    with pytest.raises(EngramError, match="has no delete grant"):
        client.forget(name, user=bob)

    assert client.share(name, bob, ["write", "share"], user=alice)["permissions"] == ["read", "write", "share"]
    client.remember("Bob was here.", dataset=name, user=bob, create_dataset=False, background=False)
    with store.unit_of_work() as uow:
        assert uow.access.find_own(name, bob) is None  # written into alice's dataset
    assert client.share(name, eve, user=bob)["permissions"] == ["read"]  # share passed on
    with pytest.raises(EngramError, match="owns dataset"):
        client.unshare(name, alice, user=bob)  # the owner's grants are never revoked

    assert client.unshare(name, bob, user=alice)["permissions"] == []
    with pytest.raises(EngramError, match="does not exist for user"):
        client.recall("Who leads Project Heron?", datasets=[name], user=bob)
    with pytest.raises(EngramError, match="invalid payload for engram.share: permissions"):
        client.call("engram.share", dataset=name, user=alice, grantee=bob, permissions=["admin"])


def test_a_share_never_blocks_the_grantees_own_dataset_of_that_name(client, store, people):
    alice, bob, _, name = people
    client.share(name, bob, ["read"], user=alice)
    client.remember("Bob's own note about Saltline Labs.", dataset=name, user=bob, create_dataset=True,
                    background=False)
    with store.unit_of_work() as uow:
        owns = uow.access.find_own(name, bob)
        assert owns is not None and owns != uow.access.find_own(name, alice)
        assert uow.access.find_dataset(name, bob) == owns  # names resolve own-first
    mine = client.recall("Saltline Labs", datasets=[name], user=bob, search_type="CHUNKS_LEXICAL")
    assert mine.items and all("Saltline" in i.text for i in mine.items)


def test_a_read_only_grantees_session_recall_stores_nothing_in_the_owners_dataset(client, store, people, tmp_path,
                                                                                 monkeypatch):
    from engram.adapters.llm.gateway import gateway_from_settings
    from engram.settings import get_settings, reset_settings
    from engram.tasks.recall import recall_query

    alice, bob, _, name = people
    client.share(name, bob, ["read"], user=alice)
    cassette = tmp_path / "answers.json"
    cassette.write_text(json.dumps({"version": 1, "entries": [
        {"contains": "", "response_model": "text", "response": "Mira Holt leads it."}]}))
    monkeypatch.setenv("ENGRAM_LLM_MODEL", f"replay:{cassette}")
    reset_settings()
    try:
        gateway = gateway_from_settings(get_settings())
        ask = dict(question="Who leads Project Heron?", datasets=[name], session_id="chat-1",
                   search_type="RAG_COMPLETION")
        read_only = recall_query(RecallRequest(user=bob, **ask), gateway=gateway, request_id=uuid.uuid4().hex)
        assert read_only.items[0].kind == "answer"
        assert _entries(store, alice, name) == 0
        owner = recall_query(RecallRequest(user=alice, **ask), gateway=gateway, request_id=uuid.uuid4().hex)
        assert owner.items[0].kind == "answer" and _entries(store, alice, name) == 1
    finally:
        monkeypatch.delenv("ENGRAM_LLM_MODEL")
        reset_settings()
