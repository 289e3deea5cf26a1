"""The LLM gateway: structured output, bounded re-asks, accounting, replay cassettes, offline."""

from __future__ import annotations

import json

import pytest

from engram.adapters.llm import usage
from engram.adapters.llm.errors import CassetteMiss, LLMInvalidOutput, LLMTransientError, LLMUnavailable
from engram.adapters.llm.gateway import LLMGateway
from engram.adapters.llm.providers import OfflineProvider, ReplayProvider
from engram.models.graph import ChunkExtraction, KnowledgeGraph, SummarizedContent


def _cassette(tmp_path, entries):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    return path


MESSAGES = [{"role": "user", "content": "Text: Alice Moreau runs Harbor Dynamics."}]
SUMMARY = {"summary": "Alice runs Harbor.", "description": "d"}


def test_first_matching_entry_of_the_requested_model_answers(tmp_path):
    path = _cassette(tmp_path, [
        {"contains": "Alice", "response_model": "KnowledgeGraph", "response": {"nodes": [], "edges": []}},
        {"contains": "Bob", "response_model": "SummarizedContent", "response": {"summary": "bob"}},
        {"contains": "Alice", "response_model": "SummarizedContent", "response": SUMMARY},
        {"contains": "Alice", "response_model": "*", "response": {"summary": "wildcard"}},
    ])
    answer = LLMGateway(ReplayProvider(path)).structured(MESSAGES, SummarizedContent)
    assert answer.summary == "Alice runs Harbor."


def test_no_match_names_the_model_and_the_start_of_the_prompt(tmp_path):
    path = _cassette(tmp_path, [{"contains": "Zed", "response_model": "*", "response": SUMMARY}])
    with pytest.raises(CassetteMiss) as caught:
        LLMGateway(ReplayProvider(path)).structured(MESSAGES, SummarizedContent)
    assert "SummarizedContent" in str(caught.value) and "Alice Moreau" in str(caught.value)


def test_invalid_json_is_re_asked_a_bounded_number_of_times_then_fails(tmp_path):
    path = _cassette(tmp_path, [{"contains": "", "response_model": "*", "response": "not { json"}])
    with usage.usage_scope() as used:
        with pytest.raises(LLMInvalidOutput, match="after 3 attempts"):
            LLMGateway(ReplayProvider(path), max_reasks=2).structured(MESSAGES, SummarizedContent)
    assert used.calls == 3


def test_a_valid_answer_after_an_invalid_one_is_accepted(tmp_path):
    # The re-ask carries the invalid answer, so a cassette can answer the second call differently.
    path = _cassette(tmp_path, [
        {"contains": "That answer was invalid", "response_model": "*", "response": SUMMARY},
        {"contains": "", "response_model": "*", "response": "```json\n{\"summary\": 3}\n```"},
    ])
    with usage.usage_scope() as used:
        answer = LLMGateway(ReplayProvider(path), max_reasks=1).structured(MESSAGES, SummarizedContent)
    assert answer.summary == "Alice runs Harbor." and used.calls == 2


def test_simulated_provider_errors_are_transient_and_counted(tmp_path):
    path = _cassette(tmp_path, [{"contains": "", "response_model": "*", "error": "rate_limit"}])
    with usage.usage_scope() as used:
        with pytest.raises(LLMTransientError, match="RateLimitError"):
            LLMGateway(ReplayProvider(path)).structured(MESSAGES, SummarizedContent)
    assert used.calls == 1 and used.prompt_tokens > 0


def test_tokens_are_counted_per_scope_and_nested_scopes_both_see_calls(tmp_path):
    path = _cassette(tmp_path, [{"contains": "", "response_model": "*", "response": SUMMARY}])
    gateway = LLMGateway(ReplayProvider(path))
    with usage.usage_scope() as run:
        with usage.usage_scope() as stage:
            gateway.structured(MESSAGES, SummarizedContent)
        gateway.structured(MESSAGES, SummarizedContent)
    assert stage.calls == 1 and run.calls == 2
    assert run.prompt_tokens > stage.prompt_tokens > 0 and run.completion_tokens > 0


def test_malformed_cassette_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"entries": []}))
    with pytest.raises(Exception, match="version"):
        ReplayProvider(path)


def test_offline_default_extracts_deterministically_and_refuses_completions():
    gateway = LLMGateway(OfflineProvider())
    text = "Alice Moreau is the CEO of Harbor Dynamics."
    first = gateway.structured(MESSAGES, ChunkExtraction, subject=text)
    again = gateway.structured(MESSAGES, ChunkExtraction, subject=text)
    assert first == again
    assert {n.name for n in first.graph.nodes} >= {"Alice Moreau", "Harbor Dynamics"}
    assert not gateway.generates
    with pytest.raises(LLMUnavailable, match="ENGRAM_LLM_MODEL"):
        gateway.complete(MESSAGES)
    assert isinstance(gateway.structured(MESSAGES, KnowledgeGraph, subject=text), KnowledgeGraph)


def test_a_relationship_longer_than_its_column_is_invalid_output_and_re_asked(tmp_path):
    # edges.relationship holds 200 characters: such an answer is re-asked and never reaches the load.
    edge = {"source_node_id": "a", "target_node_id": "b"}
    nodes = [{"id": "a", "name": "Alice"}, {"id": "b", "name": "Acme"}]
    path = _cassette(tmp_path, [
        {"contains": "That answer was invalid", "response_model": "*",
         "response": {"nodes": nodes, "edges": [{**edge, "relationship_name": "ceo_of"}]}},
        {"contains": "", "response_model": "*",
         "response": {"nodes": nodes, "edges": [{**edge, "relationship_name": "x" * 201}]}},
    ])
    answer = LLMGateway(ReplayProvider(path), max_reasks=1).structured(MESSAGES, KnowledgeGraph)
    assert answer.edges[0].relationship_name == "ceo_of"
    with pytest.raises(LLMInvalidOutput, match="KnowledgeGraph: invalid output"):
        LLMGateway(ReplayProvider(path), max_reasks=0).structured(MESSAGES, KnowledgeGraph)


def test_the_offline_extractor_never_names_a_relationship_longer_than_its_column():
    from engram.adapters.llm.offline import offline_graph

    for text in ("Alice Moreau " + "x" * 250 + " Harbor Dynamics.", "Alice Moreau founded " + "x" * 250 + " Acme."):
        assert all(len(e.relationship_name) <= 200 for e in offline_graph(text).edges)
