"""Cognify end to end with real workers: remember → Postgres graph + vectors, and what goes wrong."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from engram.tasks.client import EngramError, RunHandle

DEMO = Path(__file__).resolve().parents[2] / "cli" / "data" / "demo"


def _dataset_counts(store, dataset_name: str, user: str = "default") -> dict[str, int]:
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(dataset_name, user)
        if dataset is None:
            return {}
        counts = uow.graph.counts(dataset)
        counts["vectors"] = uow.conn.execute(
            text("SELECT (SELECT count(*) FROM chunks WHERE dataset_id=:d AND embedding IS NOT NULL)"
                 " + (SELECT count(*) FROM entities WHERE dataset_id=:d AND embedding IS NOT NULL)"
                 " + (SELECT count(*) FROM edges WHERE dataset_id=:d AND embedding IS NOT NULL)"
                 " + (SELECT count(*) FROM summaries WHERE dataset_id=:d AND embedding IS NOT NULL)"),
            {"d": dataset},
        ).scalar_one()
        return counts


def _all_counts(store) -> dict[str, int]:
    with store.unit_of_work() as uow:
        return {t: uow.conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()
                for t in ("users", "datasets", "dataset_grants", "data_items", "documents", "chunks",
                          "entities", "edges", "summaries", "pipeline_runs", "stage_runs")}


def test_ten_documents_complete_with_graph_and_vectors_and_recall_finds_the_right_one(client, store, dataset_name):
    paths = sorted(DEMO.glob("*.md"))[:10]
    statuses = client.remember(dataset=dataset_name, paths=paths, background=False, timeout=600)
    assert [s.status for s in statuses] == ["completed"] * 10, [s.error for s in statuses]
    for s in statuses:
        assert [st.status for st in s.stages] == ["completed"] * 5
    counts = _dataset_counts(store, dataset_name)
    assert counts["documents"] == 10
    assert counts["chunks"] >= 10 and counts["summaries"] == counts["chunks"]
    assert counts["entities"] > 20 and counts["edges"] > counts["entities"]
    assert counts["vectors"] == counts["chunks"] + counts["entities"] + counts["edges"] + counts["summaries"]

    result = client.recall("When did the Great Flood begin and how long did it last?", datasets=[dataset_name],
                           search_type="CHUNKS", top_k=3)
    assert result.items[0].provenance.title == "10-great-flood-2011.md"
    assert result.items[0].provenance.chunk_ids


def test_contains_edges_link_chunks_to_entities_with_their_text(client, store, dataset_name):
    client.remember("Alice Moreau is the CEO of Harbor Dynamics. Harbor Dynamics is located in Port Alder.",
                    dataset=dataset_name, background=False)
    with store.unit_of_work() as uow:
        rows = uow.conn.execute(text(
            "SELECT g.edge_text FROM edges g JOIN chunks c ON c.id = g.source_id"
            " WHERE g.relationship = 'contains' AND c.dataset_id = (SELECT id FROM datasets WHERE name=:n)"),
            {"n": dataset_name}).scalars().all()
    assert any(r.startswith("Document chunk mentions Harbor Dynamics") for r in rows), rows


def test_remembering_the_same_content_twice_creates_no_new_rows(client, store, dataset_name):
    paths = sorted(DEMO.glob("*.md"))[10:13]
    first = client.remember(dataset=dataset_name, paths=paths, background=False)
    assert all(s.status == "completed" for s in first)
    before = _all_counts(store)
    again = client.remember(dataset=dataset_name, paths=paths)
    assert all(r.duplicate for r in again.runs)
    assert [r.run_id for r in again.runs] == [s.run_id for s in first]
    assert _all_counts(store) == before


def _cassette(path: Path, entries: list[dict]) -> None:
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    # Workers re-read on mtime change; make sure a rewrite within the same second is seen.
    stamp = time.time() + 1
    os.utime(path, (stamp, stamp))


def _extraction(name: str) -> dict:
    return {"graph": {"nodes": [{"id": "a", "name": name, "type": "organization", "description": "test org"},
                                {"id": "b", "name": "Port Alder", "type": "place", "description": "a city"}],
                      "edges": [{"source_node_id": "a", "target_node_id": "b", "relationship_name": "located_in"}]},
            "summary": {"summary": f"About {name}.", "description": "summary"}}


def test_a_sigkilled_worker_loses_nothing_and_duplicates_nothing(worker_factory, store, dataset_name, tmp_path):
    cassette = tmp_path / "slow.json"
    _cassette(cassette, [{"contains": "", "response_model": "ChunkExtraction", "response": _extraction("Kestrel"),
                          "delay_seconds": 1.5}])
    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_RUN_HEARTBEAT_TIMEOUT_SECONDS": "4"}
    first = worker_factory(env, concurrency=2)
    paths = sorted(DEMO.glob("*.md"))[:6]
    handle = first.client.remember(dataset=dataset_name, paths=paths)
    run_ids = [r.run_id for r in handle.runs]

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the chains are mid-way
        with store.unit_of_work() as uow:
            running = uow.conn.execute(text(
                "SELECT count(*) FROM stage_runs WHERE run_id = ANY(:r) AND stage='extract_graph_and_summarize'"
                " AND status='running'"), {"r": run_ids}).scalar_one()
        if running:
            break
        time.sleep(0.1)
    assert running, "no extraction started"
    first.kill()

    second = worker_factory(env, concurrency=2, broker_of=first)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        statuses = [second.client.run_status(r) for r in run_ids]
        if all(s.done for s in statuses):
            break
        second.client.call("engram.maintenance.sweep_runs")
        time.sleep(2)
    assert [s.status for s in statuses] == ["completed"] * 6, [(s.status, s.error) for s in statuses]
    counts = _dataset_counts(store, dataset_name)
    assert counts["data_items"] == 6 and counts["documents"] == 6
    with store.unit_of_work() as uow:
        expected_chunks = sum(len(uow.runs.stage_output(r, "chunk")["chunks"]) for r in run_ids)
        distinct = uow.conn.execute(text(
            "SELECT count(DISTINCT (document_id, chunk_index)) FROM chunks WHERE document_id IN"
            " (SELECT id FROM documents WHERE data_item_id IN (SELECT data_item_id FROM pipeline_runs"
            " WHERE id = ANY(:r)))"), {"r": run_ids}).scalar_one()
    assert counts["chunks"] == expected_chunks == distinct
    assert counts["summaries"] == expected_chunks
    # One entity per name across all six documents (plus each document's title as its main
    # entity), one edge per identity.
    assert counts["entities"] == 2 + len(paths)


@pytest.mark.parametrize(
    "failure, transient",
    [({"error": "timeout"}, True), ({"error": "rate_limit"}, True), ({"response": "this is { not json"}, False)],
    ids=["timeout", "rate_limit", "invalid_json"],
)
def test_llm_failure_retries_within_bound_fails_cleanly_then_retry_resumes(
    worker_factory, store, dataset_name, tmp_path, failure, transient
):
    cassette = tmp_path / "llm.json"
    _cassette(cassette, [{"contains": "", "response_model": "ChunkExtraction", **failure}])
    w = worker_factory({"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_TASK_MAX_RETRIES": "2",
                        "ENGRAM_RETRY_BACKOFF_BASE_SECONDS": "0.1", "ENGRAM_LLM_MAX_REASKS": "1"})
    [status] = w.client.remember("Kestrel Foods is located in Port Alder.", dataset=dataset_name,
                                 background=False, timeout=120)
    assert status.status == "failed"
    stages = {s.stage: s for s in status.stages}
    extract = stages["extract_graph_and_summarize"]
    assert extract.status == "failed"
    if transient:
        assert extract.attempts == 3  # the first try and two retries
        assert extract.llm_calls == 3
        assert ("Timeout" if failure["error"] == "timeout" else "RateLimitError") in status.error
    else:
        assert extract.attempts == 1  # invalid output is not transient: no task retry
        assert extract.llm_calls == 2  # the call and one re-ask
        assert "invalid output" in status.error
    counts = _dataset_counts(store, dataset_name)
    assert counts["data_items"] == 1  # accepted content is kept
    assert counts["documents"] == counts["chunks"] == counts["entities"] == counts["edges"] == 0

    _cassette(cassette, [{"contains": "Kestrel Foods", "response_model": "ChunkExtraction",
                          "response": _extraction("Kestrel Foods")}])
    w.client.retry(status.run_id)
    final = RunHandle(w.client, status.run_id).wait(timeout=120)
    assert final.status == "completed", final.error
    stages = {s.stage: s for s in final.stages}
    assert stages["classify"].attempts == 1 and stages["chunk"].attempts == 1  # not redone
    assert stages["extract_graph_and_summarize"].status == "completed"
    counts = _dataset_counts(store, dataset_name)
    assert counts["documents"] == 1 and counts["entities"] == 2


@pytest.fixture
def owned_by_alice(client, store, dataset_name):
    client.remember("Alice keeps this dataset.", dataset=dataset_name, user="alice", background=False)
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(dataset_name, "alice")
        bob = uow.access.ensure_user("bob")
        uow.access.grant(dataset, f"user:{bob}", "read")
    return dataset_name


BAD_INPUTS = {
    "empty text": ({"items": [{"text": ""}]}, "empty"),
    "20 MB text": ({"items": [{"text": "word " * (4 * 1024 * 1024)}]}, "over the limit"),
    "binary file": ({"items": [{"content_b64": base64.b64encode(bytes(range(256)) * 64).decode(),
                                "name": "blob.bin"}]}, "binary"),
    "invalid UTF-8": ({"items": [{"content_b64": base64.b64encode(b"caf\xe9 au lait").decode(),
                                  "name": "menu.txt"}]}, "UTF-8"),
    "NUL bytes": ({"items": [{"text": "before\x00after"}]}, "NUL"),
    "unknown dataset": ({"items": [{"text": "hello"}], "dataset": "no-such-dataset", "create_dataset": False},
                        "does not exist"),
    "no write grant": ({"items": [{"text": "bob was here"}], "user": "bob", "create_dataset": False},
                       "no write grant"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_gets_a_clear_error_and_writes_nothing(client, store, owned_by_alice, case):
    payload, expected = BAD_INPUTS[case]
    payload = {"dataset": owned_by_alice, "user": "alice", "create_dataset": True, **payload}
    before = _all_counts(store)
    with pytest.raises(EngramError) as caught:
        client.call("engram.remember", **payload)
    assert expected in str(caught.value)
    assert _all_counts(store) == before


def test_files_of_every_supported_type_are_remembered(client, store, dataset_name, tmp_path):
    from pypdf import PdfWriter

    (tmp_path / "notes.md").write_text("# Notes\n\nThe Tessel River flows through Port Alder.\n")
    (tmp_path / "people.csv").write_text("name,role\nAlice Moreau,CEO\nBob Lindqvist,CTO\n")
    (tmp_path / "facts.json").write_text(json.dumps({"city": "Port Alder", "river": "Tessel"}))
    (tmp_path / "plain.txt").write_text("Kestrel Foods makes canned fish.")
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with open(tmp_path / "blank.pdf", "wb") as fh:
        writer.write(fh)
    with pytest.raises(EngramError, match="blank.pdf"):  # a PDF without text is refused, by name
        client.remember(dataset=dataset_name, paths=[tmp_path])
    (tmp_path / "blank.pdf").unlink()
    statuses = client.remember(dataset=dataset_name, paths=[tmp_path], background=False)
    assert sorted(s.status for s in statuses) == ["completed"] * 4
    with store.unit_of_work() as uow:
        types = uow.conn.execute(text(
            "SELECT doc_type FROM documents WHERE dataset_id = (SELECT id FROM datasets WHERE name=:n)"),
            {"n": dataset_name}).scalars().all()
    assert sorted(types) == ["csv", "json", "markdown", "text"]


def test_forget_one_item_removes_exactly_its_memory(client, store, dataset_name):
    keep = "Brightwater Ferries is located in Port Alder. Brightwater Ferries runs the Merrow line."
    drop = "Calloway Shipyards is located in Port Alder. Calloway Shipyards builds ferries."
    [kept, dropped] = client.remember(dataset=dataset_name, items=[{"text": keep}, {"text": drop}],
                                      background=False)
    with store.unit_of_work() as uow:
        names_before = set(uow.conn.execute(text(
            "SELECT display_name FROM entities WHERE dataset_id=(SELECT id FROM datasets WHERE name=:n)"),
            {"n": dataset_name}).scalars())
    assert {"Calloway Shipyards", "Brightwater Ferries", "Port Alder"} <= names_before
    result = client.forget(dataset_name, data_item_id=dropped.data_item_id)
    assert result.items == 1 and result.chunks >= 1
    with store.unit_of_work() as uow:
        names_after = set(uow.conn.execute(text(
            "SELECT display_name FROM entities WHERE dataset_id=(SELECT id FROM datasets WHERE name=:n)"),
            {"n": dataset_name}).scalars())
        dangling = uow.conn.execute(text(
            "SELECT count(*) FROM edges g WHERE g.dataset_id=(SELECT id FROM datasets WHERE name=:n)"
            " AND EXISTS (SELECT 1 FROM unnest(g.provenance) p WHERE p NOT IN (SELECT id FROM chunks))"),
            {"n": dataset_name}).scalar_one()
    assert "Calloway Shipyards" not in names_after
    assert {"Brightwater Ferries", "Port Alder"} <= names_after  # shared entity kept
    assert dangling == 0
    assert client.run_status(kept.run_id).status == "completed"
    assert _dataset_counts(store, dataset_name)["documents"] == 1
