"""Recall honours what graph maintenance writes (superseded edges, validity windows,
`contradicts` edges) and generates answers through a replay LLM: real worker, real Postgres.

The maintenance passes are not run here: the test writes their annotations the way they do
(superseded / superseded_by / valid_from / valid_to columns, a `contradicts` edge with
{first_fact, second_fact, reason, confidence}), so recall is tested on its own contract.
"""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from engram.pipelines import ids

DOCS = {
    "alice.md": "Alice Moreau is the CEO of Acme Robotics.",
    "bob.md": "Bob Lindqvist is the CEO of Acme Robotics.",
    "dam-1962.md": "The Greyfen Dam was built in 1962.",
    "dam-1958.md": "The Greyfen Dam was built in 1958.",
    "seabird.md": "The Seabird drone inspects ship hulls for corrosion. Acme Robotics makes the Seabird drone.",
    "spillway.md": "Engineers found cracked concrete in the spillway of the Greyfen Dam after the flood.",
}
CONFLICT = {"first_fact": "Greyfen Dam built in 1962", "second_fact": "Greyfen Dam built in 1958",
            "reason": "a dam is built once", "confidence": 0.9}
# First match wins: the chain-of-thought steps before the conflict entry, whose facts the
# dam question's context may also hold.
CASSETTE = [
    {"contains": "Propose ONE follow-up question", "response_model": "text",
     "response": "What did engineers find in the spillway of the Greyfen Dam?"},
    {"contains": "A follow-up lookup asked: What did engineers find", "response_model": "text",
     "response": "The flood hit the dam [1].\nAnswer: cracked concrete in the spillway"},
    {"contains": 'CONFLICT: memory also says "Greyfen Dam built in 1958"', "response_model": "text",
     "response": "Memory disagrees: 1962 or 1958."},
    {"contains": "Question: What does the Seabird drone inspect?", "response_model": "text",
     "response": "Ship hulls, for corrosion [1]."},
    {"contains": "Question: Who makes the Seabird drone?", "response_model": "text", "error": "server_error"},
    {"contains": "", "response_model": "text", "response": "(unmatched prompt)"},
]


def _edge(uow, dataset, source: str, relationship: str, target: str) -> uuid.UUID:
    source_id, target_id = ids.entity_id(dataset, source), ids.entity_id(dataset, target)
    edge = ids.edge_id(dataset, source_id, target_id, relationship)
    assert uow.conn.execute(text("SELECT 1 FROM edges WHERE id = :e"), {"e": edge}).first(), (source, target)
    return edge


@pytest.fixture(scope="module")
def graph(worker, services):
    """The corpus, then the maintenance annotations: Bob's assertion superseded Alice's at the
    start of 2024 (Alice valid from 2020; Bob's start left to recall to infer), and the two
    construction years contradict each other."""
    name = f"history-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, items=[{"text": t, "name": n} for n, t in DOCS.items()],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(DOCS), [s.error for s in statuses]
    from engram.adapters.store import Store

    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(name, "default", "read")
        alice = _edge(uow, dataset, "Alice Moreau", "ceo_of", "Acme Robotics")
        bob = _edge(uow, dataset, "Bob Lindqvist", "ceo_of", "Acme Robotics")
        uow.conn.execute(text(
            "UPDATE edges SET superseded = true, superseded_by = :bob, valid_from = '2020-01-01Z',"
            " valid_to = '2024-01-01Z', supersession_reason = 'superseded by a more recent ''ceo_of'' assertion'"
            " WHERE id = :alice"), {"alice": alice, "bob": bob})
        first, second = ids.entity_id(dataset, "1962"), ids.entity_id(dataset, "1958")
        uow.conn.execute(text(
            "INSERT INTO edges (id, dataset_id, source_id, target_id, relationship, properties, edge_text)"
            " VALUES (:id, :d, :s, :t, 'contradicts', CAST(:p AS jsonb), :txt)"),
            {"id": ids.edge_id(dataset, first, second, "contradicts"), "d": dataset, "s": first, "t": second,
             "p": json.dumps(CONFLICT), "txt": "Greyfen Dam built in 1962 contradicts Greyfen Dam built in 1958"})
    return name


def _ceo_facts(client, dataset: str, **kw) -> dict[str, object]:
    result = client.recall("Who is the CEO of Acme Robotics?", datasets=[dataset], search_type="TRIPLET_COMPLETION",
                           top_k=10, **kw)
    return {i.text.split()[0]: i for i in result.items if i.kind == "triplet" and "ceo of" in i.text}


def test_superseded_facts_are_left_out_of_current_answers(client, graph):
    facts = _ceo_facts(client, graph)
    assert set(facts) == {"Bob"}
    assert facts["Bob"].superseded is False


def test_as_of_returns_the_fact_valid_at_that_time(client, graph):
    assert set(_ceo_facts(client, graph, as_of="2021-06-01T00:00:00Z")) == {"Alice"}
    assert set(_ceo_facts(client, graph, as_of="2019-06-01T00:00:00Z")) == set()  # before Alice's term
    assert set(_ceo_facts(client, graph, as_of="2025-06-01T00:00:00Z")) == {"Bob"}


def test_history_returns_superseded_facts_flagged(client, graph):
    facts = _ceo_facts(client, graph, include_history=True)
    assert set(facts) == {"Alice", "Bob"}
    assert facts["Alice"].superseded is True and facts["Bob"].superseded is False


def test_graph_context_leaves_superseded_facts_out_too(client, graph):
    result = client.recall("Who runs Acme Robotics?", datasets=[graph], search_type="GRAPH_COMPLETION", top_k=10)
    texts = [i.text for i in result.items]
    assert "Bob Lindqvist ceo of Acme Robotics" in texts and not any("Alice" in t for t in texts)


def test_contradicted_facts_come_back_with_the_conflict_attached(client, graph):
    result = client.recall("When was the Greyfen Dam built?", datasets=[graph], search_type="TRIPLET_COMPLETION",
                           top_k=5)
    facts = {i.text: i for i in result.items}
    assert not any("contradicts" in t for t in facts)  # the annotation is not a fact of its own
    built_1962, built_1958 = facts["Greyfen Dam built in 1962"], facts["Greyfen Dam built in 1958"]
    assert [(c["fact"], c["reason"], c["confidence"]) for c in built_1962.conflicts] == [
        ("Greyfen Dam built in 1958", "a dam is built once", 0.9)]
    assert [c["fact"] for c in built_1958.conflicts] == ["Greyfen Dam built in 1962"]
    others = [i for t, i in facts.items() if t not in ("Greyfen Dam built in 1962", "Greyfen Dam built in 1958")]
    assert not any(i.conflicts for i in others)


# ------------------------------------------------------------------ generated answers (replay LLM)


@pytest.fixture(scope="module")
def replay(spawn_worker, tmp_path_factory):
    folder = tmp_path_factory.mktemp("recall-replay")
    cassette = folder / "cassette.json"
    cassette.write_text(json.dumps({"version": 1, "entries": CASSETTE}))
    handle = spawn_worker({"ENGRAM_LLM_MODEL": f"replay:{cassette}"})
    yield handle
    handle.stop()


def test_rag_completion_generates_an_answer_carrying_its_context(replay, graph):
    result = replay.client.recall("What does the Seabird drone inspect?", datasets=[graph],
                                  search_type="RAG_COMPLETION", top_k=3)
    assert result.generated is True and result.note is None
    answer, context = result.items[0], result.items[1:]
    assert (answer.kind, answer.text) == ("answer", "Ship hulls, for corrosion [1].")
    assert context and context[0].provenance.title == "seabird.md"
    assert set(context[0].provenance.chunk_ids) <= set(answer.provenance.chunk_ids)


def test_completion_prompts_tell_the_model_about_a_conflict(replay, graph):
    result = replay.client.recall("When was the Greyfen Dam built?", datasets=[graph],
                                  search_type="GRAPH_COMPLETION", top_k=5)
    assert result.items[0].text == "Memory disagrees: 1962 or 1958."


def test_chain_of_thought_looks_up_a_follow_up_before_answering(replay, graph):
    result = replay.client.recall("Why did the Greyfen Dam fail?", datasets=[graph],
                                  search_type="GRAPH_COMPLETION_COT", top_k=3)
    assert result.items[0].text == "cracked concrete in the spillway"
    assert "follow-up lookup: What did engineers find" in result.note
    assert "The flood hit the dam" in result.note  # the reasoning is kept, apart from the answer


def test_a_failing_model_degrades_to_the_retrieved_context(replay, graph):
    result = replay.client.recall("Who makes the Seabird drone?", datasets=[graph], search_type="RAG_COMPLETION",
                                  top_k=3)
    assert result.generated is False and "LLM call failed (InternalServerError" in result.note
    assert result.items and result.items[0].kind == "chunk" and result.items[0].provenance.title == "seabird.md"


def test_a_generated_answer_with_a_session_is_stored_and_answers_the_next_session_question(replay, graph, store):
    session = f"s-{uuid.uuid4().hex[:8]}"
    first = replay.client.recall("What does the Seabird drone inspect?", datasets=[graph], session_id=session,
                                 search_type="RAG_COMPLETION", top_k=3)
    assert first.sources == ["graph"] and first.generated
    with store.unit_of_work() as uow:
        [entry] = uow.sessions.entries([uow.access.authorise(graph, "default", "read")], session, 10)
    assert (entry["question"], entry["answer"]) == ("What does the Seabird drone inspect?",
                                                    "Ship hulls, for corrosion [1].")
    assert "Seabird drone inspects ship hulls" in entry["context"] and entry["source_chunk_ids"]
    again = replay.client.recall("what does the seabird inspect", datasets=[], session_id=session, search_type="CHUNKS")
    assert again.sources == ["session"] and "Ship hulls" in again.items[0].text

