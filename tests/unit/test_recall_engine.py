import uuid

import pytest

from engram.models.payloads import Provenance, RecallItem, RecallRequest, RecallResult
from engram.models.search import SearchType
from engram.pipelines.recall.context import Scope
from engram.pipelines.recall.engine import choose_type, entry_id, session_entry
from engram.pipelines.recall.registry import REGISTRY
from engram.pipelines.recall.temporal import window_of

D1, D2 = uuid.uuid4(), uuid.uuid4()
SCOPE = Scope([D1, D2], {D1: "one", D2: "two"}, uuid.uuid4(), writable=frozenset({D1, D2}))


def test_every_search_type_but_feeling_lucky_has_a_recipe():
    assert set(SearchType) - set(REGISTRY) == {SearchType.FEELING_LUCKY}
    # completion types say what their context is; retrieval-only types generate nothing
    for search_type, recipe in REGISTRY.items():
        assert bool(recipe.style) == recipe.completes, search_type
    # the agentic type alone is answered by the tool loop, not by a lane
    assert [t for t, r in REGISTRY.items() if r.lane is None] == [SearchType.AGENTIC_COMPLETION]
    assert [t for t, r in REGISTRY.items() if r.agentic] == [SearchType.AGENTIC_COMPLETION]


def test_explicit_types_are_pinned_feeling_lucky_and_none_are_routed():
    assert choose_type("TEMPORAL") == (SearchType.TEMPORAL, True)
    assert choose_type("FEELING_LUCKY")[1] is False
    assert choose_type(None)[1] is False


def _result(sources, items):
    return RecallResult(question="q", search_type="CHUNKS", items=items, sources=sources)


def test_a_recall_with_a_session_stores_question_answer_context_in_the_best_items_dataset():
    c = uuid.uuid4()
    items = [RecallItem(kind="answer", text="Bob", score=1.0),
             RecallItem(kind="chunk", text="Bob runs Acme", score=0.9, provenance=Provenance(dataset="two", chunk_ids=[c]))]
    req = RecallRequest(question="who runs acme", session_id="s1")
    entry = session_entry(req, SCOPE, _result(["graph"], items))
    assert entry["dataset_id"] == D2 and entry["answer"] == "Bob" and entry["user_id"] == SCOPE.user_id
    assert entry["context"] == "[1] (passage) Bob runs Acme" and entry["source_chunk_ids"] == [c]


def test_nothing_is_stored_without_a_session_an_answer_or_a_graph_lookup():
    answered = [RecallItem(kind="answer", text="Bob", score=1.0)]
    context_only = [RecallItem(kind="chunk", text="Bob runs Acme", score=0.9)]
    session = RecallRequest(question="q", session_id="s")
    assert session_entry(RecallRequest(question="q"), SCOPE, _result(["graph"], answered)) is None
    assert session_entry(session, SCOPE, _result(["graph"], context_only)) is None  # no LLM answer
    assert session_entry(session, SCOPE, _result(["session"], answered)) is None  # the session answered
    assert session_entry(session, Scope([], {}), _result(["graph"], answered)) is None


def test_a_read_only_dataset_never_receives_the_entry():
    c = uuid.uuid4()
    items = [RecallItem(kind="answer", text="Bob", score=1.0),
             RecallItem(kind="chunk", text="Bob runs Acme", score=0.9, provenance=Provenance(dataset="two", chunk_ids=[c]))]
    req = RecallRequest(question="who runs acme", session_id="s1")
    only_d1 = Scope([D1, D2], {D1: "one", D2: "two"}, uuid.uuid4(), writable=frozenset({D1}))
    assert session_entry(req, only_d1, _result(["graph"], items))["dataset_id"] == D1  # the writable one
    read_only = Scope([D2], {D2: "two"}, uuid.uuid4())
    assert session_entry(req, read_only, _result(["graph"], items)) is None


def test_entry_ids_are_stable_per_delivery():
    assert entry_id("task-1") == entry_id("task-1") != entry_id("task-2")
    assert entry_id(None) is None


@pytest.mark.parametrize("question, window", [
    ("what happened between 1980 and 1990", (1980, 1990)),
    ("before 1970", (1, 1969)),
    ("when was it founded", (1, 9999)),
])
def test_temporal_window_from_the_question(question, window):
    assert window_of(question) == window
