"""Graph maintenance passes with a real worker, real Postgres and a replay LLM (SPEC 7).

One replay worker serves the module. Every scenario has its own dataset and its own entity
names, so the one cassette below answers all of them without any entry matching another's.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from engram.tasks.client import EngramError, RunHandle

MAX_FACTS = 4


def _extraction(doc: str, nodes: list[tuple[str, str]], edges: list[tuple[str, str, str, str]]) -> dict:
    """A ChunkExtraction cassette entry for `doc`: nodes (name, type), edges (source, target, rel, desc)."""
    ids = {name: f"n{i}" for i, (name, _) in enumerate(nodes, 1)}
    return {
        "contains": doc,
        "response_model": "ChunkExtraction",
        "response": {
            "graph": {
                "nodes": [{"id": ids[n], "name": n, "type": t, "description": ""} for n, t in nodes],
                "edges": [{"source_node_id": ids[s], "target_node_id": ids[t], "relationship_name": r,
                           "description": d} for s, t, r, d in edges],
            },
            "summary": {"summary": doc, "description": ""},
        },
    }


def _claims(*claims: tuple[str, str, float]) -> dict:
    return {"contradictions": [{"first_fact_id": a, "second_fact_id": b, "reason": "one headquarters at a time",
                                "confidence": c} for a, b, c in claims]}


def _hq_doc(company: str) -> str:
    return f"{company} is headquartered in Paris. {company} is headquartered in Berlin."


def _hq_extraction(company: str) -> dict:
    return _extraction(_hq_doc(company), [(company, "company"), ("Paris", "city"), ("Berlin", "city")],
                       [(company, "Paris", "headquartered_in", ""), (company, "Berlin", "headquartered_in", "")])


# One judged answer per scenario, keyed by the scenario's own company name.
HQ = {
    "Quorvane Labs": {"response": _claims(("F1", "F2", 0.95))},
    "Brindle Works": {"response": _claims(("F1", "F2", 0.2))},
    "Castor Nine": {"response": _claims(("F1", "F7", 0.99), ("F9", "F2", 0.99))},
    "Dunmore Ltd": {"error": "timeout"},
}
CITIES = ["Oslo", "Lima", "Quito", "Hanoi", "Accra", "Riga"]
CAP_DOC = "Zyphor Inc has offices in " + ", ".join(CITIES) + "."
ALICE_DOC = "Alice is CEO of Acme (2020)."
BOB_DOC = "Bob is CEO of Acme (2024)."


def _ceo_extraction(doc: str, person: str) -> dict:
    return _extraction(doc, [(person, "person"), ("Acme", "company")],
                       [(person, "Acme", "ceo_of", f"{person} is the CEO of Acme")])


ENTRIES = [
    # Sent only if max_facts failed to cap the list: the check would fail.
    {"contains": f"[F{MAX_FACTS + 1}]", "response_model": "ContradictionList", "error": "server_error"},
    *[_hq_extraction(c) for c in HQ],
    *[dict({"contains": f"{c} headquartered in", "response_model": "ContradictionList"}, **answer)
      for c, answer in HQ.items()],
    _extraction(CAP_DOC, [("Zyphor Inc", "company")] + [(c, "city") for c in CITIES],
                [("Zyphor Inc", c, "office_in", "") for c in CITIES]),
    {"contains": "Zyphor Inc office in", "response_model": "ContradictionList",
     "response": _claims(("F1", "F4", 0.9))},
    _ceo_extraction(ALICE_DOC, "Alice"),
    _ceo_extraction(BOB_DOC, "Bob"),
    {"contains": "", "response_model": "text", "response": "(replayed answer)"},
]


@pytest.fixture(scope="module")
def replay(spawn_worker, tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph-passes")
    cassette = folder / "cassette.json"
    cassette.write_text(json.dumps({"version": 1, "entries": ENTRIES}))
    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_CONTRADICTION_MAX_FACTS": str(MAX_FACTS),
           "ENGRAM_TASK_MAX_RETRIES": "1", "ENGRAM_RETRY_BACKOFF_BASE_SECONDS": "0.1",
           "ENGRAM_RETRY_BACKOFF_MAX_SECONDS": "1"}
    handle = spawn_worker(env, concurrency=2)
    yield handle
    handle.stop()


def _remember(replay, dataset: str, doc: str, **options):
    [status] = replay.client.remember(doc, dataset=dataset, options=options or None, background=False, timeout=180)
    return status


def _stage(status, name: str):
    return next(s for s in status.stages if s.stage == name)


def _output(store, run_id, stage: str) -> dict | None:
    with store.unit_of_work() as uow:
        return uow.runs.stage_output(run_id, stage)


def _edges(store, dataset_name: str, relationship: str | None = None) -> list[dict]:
    """Every column of the dataset's edges but the vector, in id order."""
    with store.unit_of_work() as uow:
        rows = uow.conn.execute(text(
            "SELECT g.id, g.source_id, g.target_id, g.relationship, g.properties, g.edge_text, g.provenance,"
            " g.created_at, g.updated_at, g.valid_from, g.valid_to, g.superseded, g.superseded_by,"
            " g.supersession_reason, s.display_name AS source_name, t.display_name AS target_name"
            " FROM edges g JOIN datasets d ON d.id = g.dataset_id"
            " LEFT JOIN entities s ON s.id = g.source_id LEFT JOIN entities t ON t.id = g.target_id"
            " WHERE d.name = :n AND (CAST(:r AS text) IS NULL OR g.relationship = :r) ORDER BY g.id"),
            {"n": dataset_name, "r": relationship}).mappings()
        return [dict(r) for r in rows]


def _run_pass(replay, task: str, **kwargs):
    accepted = replay.client.call(task, **kwargs)
    assert accepted["status"] == "accepted"
    return RunHandle(replay.client, accepted["run_id"]).wait(timeout=120)


# ------------------------------------------------------------------ contradiction check


def test_confident_contradiction_becomes_one_contradicts_edge_with_engrams_rendered_facts(replay, store, dataset_name):
    status = _remember(replay, dataset_name, _hq_doc("Quorvane Labs"), contradiction_check=True)
    assert status.status == "completed" and status.error is None
    assert _stage(status, "contradiction_check").status == "completed"
    assert _stage(status, "contradiction_check").llm_calls == 1
    [edge] = _edges(store, dataset_name, "contradicts")
    props = edge["properties"]
    assert {props["first_fact"], props["second_fact"]} == {"Quorvane Labs headquartered in Paris",
                                                            "Quorvane Labs headquartered in Berlin"}
    assert props["reason"] == "one headquarters at a time" and props["confidence"] == 0.95
    # Endpoints are the two targets (same source); both facts stay, and the conflict has their sources.
    assert {edge["source_name"], edge["target_name"]} == {"Paris", "Berlin"}
    facts = _edges(store, dataset_name, "headquartered_in")
    assert len(facts) == 2
    assert {props["first_edge_id"], props["second_edge_id"]} == {str(f["id"]) for f in facts}
    assert set(edge["provenance"]) == {c for f in facts for c in f["provenance"]}


def test_rerunning_the_contradiction_check_changes_no_edge(replay, store, dataset_name):
    _remember(replay, dataset_name, _hq_doc("Quorvane Labs"), contradiction_check=True)
    before = _edges(store, dataset_name)
    assert sum(e["relationship"] == "contradicts" for e in before) == 1
    for _ in range(2):
        done = _run_pass(replay, "engram.maintenance.check_contradictions", dataset=dataset_name)
        assert done.status == "completed" and done.stages[0].status == "completed", done
        assert _edges(store, dataset_name) == before


@pytest.mark.parametrize("company", ["Brindle Works", "Castor Nine"], ids=["low-confidence", "invented-ids"])
def test_unconvincing_or_invented_claims_write_nothing(replay, store, dataset_name, company):
    status = _remember(replay, dataset_name, _hq_doc(company), contradiction_check=True)
    stage = _stage(status, "contradiction_check")
    assert status.status == "completed" and stage.status == "completed" and stage.llm_calls == 1
    assert _output(store, status.run_id, "contradiction_check")["claimed"] >= 1
    assert _edges(store, dataset_name, "contradicts") == []


def test_max_facts_caps_what_is_sent(replay, store, dataset_name):
    status = _remember(replay, dataset_name, CAP_DOC, contradiction_check=True)
    # The cassette fails any call that carries a fact beyond the cap.
    assert _stage(status, "contradiction_check").status == "completed", _stage(status, "contradiction_check").error
    assert _output(store, status.run_id, "contradiction_check")["facts"] == MAX_FACTS
    assert len(_edges(store, dataset_name, "office_in")) == len(CITIES)
    assert len(_edges(store, dataset_name, "contradicts")) == 1


def test_llm_failure_is_recorded_on_the_stage_and_the_document_stays(replay, store, dataset_name):
    status = _remember(replay, dataset_name, _hq_doc("Dunmore Ltd"), contradiction_check=True,
                       functional_relationships={"headquartered_in": "source"})
    check = _stage(status, "contradiction_check")
    assert check.status == "failed" and "Timeout" in check.error
    assert check.attempts == 2  # one retry, then recorded
    # The run completes, names the failed pass, and the later pass still ran.
    assert status.status == "completed" and "contradiction_check" in status.error
    assert _stage(status, "embed_and_load").status == "completed"
    assert _stage(status, "temporal_supersession").status == "completed"
    assert len(_edges(store, dataset_name, "headquartered_in")) == 2
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(dataset_name, "default")
        assert uow.graph.counts(dataset)["chunks"] >= 1
    assert _edges(store, dataset_name, "contradicts") == []
    result = replay.client.recall("Where is Dunmore Ltd headquartered?", datasets=[dataset_name],
                                  search_type="CHUNKS", top_k=3)
    assert "Dunmore Ltd" in result.items[0].text
    # Retrying the run reruns the failed pass only. Supersession has since made one headquarters
    # history, so the rerun finds a single current fact: nothing to compare, no LLM call.
    assert replay.client.retry(status.run_id)["stages"] == ["contradiction_check"]
    again = RunHandle(replay.client, status.run_id).wait(timeout=120)
    check = _stage(again, "contradiction_check")
    assert (check.status, check.attempts, check.llm_calls) == ("skipped", 3, 2)
    assert _stage(again, "embed_and_load").attempts == 1
    assert again.status == "completed" and again.error is None


# ------------------------------------------------------------------ temporal supersession


def _ceo_edges(store, dataset_name: str) -> dict[str, dict]:
    return {e["source_name"]: e for e in _edges(store, dataset_name, "ceo_of")}


def _assert_alice_superseded_by_bob(edges: dict[str, dict]) -> None:
    alice, bob = edges["Alice"], edges["Bob"]
    assert alice["superseded"] is True and alice["superseded_by"] == bob["id"]
    assert alice["supersession_reason"] == "superseded by a more recent 'ceo_of' assertion"
    assert alice["valid_from"] == datetime(2020, 1, 1, tzinfo=UTC)
    assert alice["valid_to"] == bob["valid_from"] == datetime(2024, 1, 1, tzinfo=UTC)
    assert bob["superseded"] is False and bob["superseded_by"] is None and bob["valid_to"] is None
    assert alice["properties"] == {"description": "Alice is the CEO of Acme"}  # other properties kept


@pytest.fixture(scope="module")
def ceo_dataset(replay):
    """Alice (2020) remembered first, Bob (2024) later, ceo_of declared one-source-per-target."""
    name = f"ceo-acme-{uuid.uuid4().hex[:8]}"
    options = {"functional_relationships": {"ceo_of": "target"}}
    for doc in (ALICE_DOC, BOB_DOC):
        status = _remember(replay, name, doc, **options)
        assert status.status == "completed" and _stage(status, "temporal_supersession").status == "completed"
    return name


def test_later_assertion_supersedes_the_earlier_one(ceo_dataset, store):
    _assert_alice_superseded_by_bob(_ceo_edges(store, ceo_dataset))


def test_the_asserted_year_wins_over_the_order_of_ingestion(replay, store, dataset_name):
    for doc in (BOB_DOC, ALICE_DOC):  # Alice's older assertion arrives last
        _remember(replay, dataset_name, doc, functional_relationships={"ceo_of": "target"})
    _assert_alice_superseded_by_bob(_ceo_edges(store, dataset_name))


def test_whole_dataset_pass_collapses_target_side_only_when_declared_so(replay, store, dataset_name):
    for doc in (ALICE_DOC, BOB_DOC):
        _remember(replay, dataset_name, doc)
    source_side = _run_pass(replay, "engram.maintenance.supersede", dataset=dataset_name,
                            functional_relationships={"ceo_of": "source"})
    assert source_side.status == "completed" and source_side.stages[0].status == "completed"
    assert not any(e["superseded"] for e in _edges(store, dataset_name))
    target_side = _run_pass(replay, "engram.maintenance.supersede", dataset=dataset_name,
                            functional_relationships={"ceo_of": "target"})
    assert target_side.stages[0].status == "completed"
    _assert_alice_superseded_by_bob(_ceo_edges(store, dataset_name))


def test_rerunning_supersession_changes_no_edge(ceo_dataset, replay, store):
    before = _edges(store, ceo_dataset)
    for _ in range(2):
        done = _run_pass(replay, "engram.maintenance.supersede", dataset=ceo_dataset,
                         functional_relationships={"ceo_of": "target"})
        assert done.status == "completed" and done.stages[0].status == "completed"
        assert _edges(store, ceo_dataset) == before


def test_dataset_passes_validate_and_authorise(replay, store, dataset_name):
    with pytest.raises(EngramError, match="invalid payload.*functional_relationships"):
        replay.client.call("engram.maintenance.supersede", dataset=dataset_name, functional_relationships={})
    with pytest.raises(EngramError, match="does not exist"):
        replay.client.call("engram.maintenance.check_contradictions", dataset=dataset_name)
    _remember(replay, dataset_name, ALICE_DOC)
    with store.unit_of_work() as uow:  # mallory may read the dataset, not change it
        dataset = uow.access.find_dataset(dataset_name, "default")
        uow.access.grant(dataset, f"user:{uow.access.ensure_user('mallory')}", "read")
    runs_before = len(replay.client.dataset_status(dataset_name))
    with pytest.raises(EngramError, match="no write grant"):
        replay.client.call("engram.maintenance.supersede", dataset=dataset_name, user="mallory",
                           functional_relationships=["ceo_of"])
    assert len(replay.client.dataset_status(dataset_name)) == runs_before


# ------------------------------------------------------------------ recall honours both (end to end)


def _triplets(replay, dataset: str, **kwargs) -> list:
    result = replay.client.recall("Who is the CEO of Acme?", datasets=[dataset], search_type="TRIPLET_COMPLETION",
                                  top_k=10, **kwargs)
    return [i for i in result.items if i.kind == "triplet" and "ceo of" in i.text.lower()]


def test_recall_returns_the_current_ceo_only(ceo_dataset, replay):
    texts = [i.text for i in _triplets(replay, ceo_dataset)]
    assert any("Bob" in t for t in texts), texts
    assert not any("Alice" in t for t in texts), texts


def test_recall_as_of_returns_the_ceo_of_that_time(ceo_dataset, replay):
    texts = [i.text for i in _triplets(replay, ceo_dataset, as_of="2021-06-01T00:00:00Z")]
    assert any("Alice" in t for t in texts), texts
    assert not any("Bob" in t for t in texts), texts


def test_recall_with_history_returns_both_marking_the_superseded(ceo_dataset, replay):
    items = {("Alice" if "Alice" in i.text else "Bob"): i for i in _triplets(replay, ceo_dataset, include_history=True)}
    assert set(items) == {"Alice", "Bob"}
    assert items["Alice"].superseded is True and items["Bob"].superseded is False


def test_recall_attaches_the_conflicting_fact(replay, dataset_name):
    _remember(replay, dataset_name, _hq_doc("Quorvane Labs"), contradiction_check=True)
    result = replay.client.recall("Where is Quorvane Labs headquartered?", datasets=[dataset_name],
                                  search_type="TRIPLET_COMPLETION", top_k=10)
    paris = next(i for i in result.items if i.kind == "triplet" and i.text.endswith("Paris"))
    assert "Quorvane Labs headquartered in Berlin" in json.dumps(paris.conflicts), paris.conflicts
