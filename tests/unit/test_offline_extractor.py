"""Offline extractor: deterministic, valid, and good enough to link names without an LLM."""

from __future__ import annotations

import uuid

from engram.adapters.llm.offline import offline_chunk_extraction, offline_graph, offline_summary
from engram.models.graph import ChunkExtraction, KnowledgeGraph
from engram.pipelines.cognify.extract import build_graph

STORY = (
    "Alice is the CEO of Acme Corp. She founded Acme Corp in 1999 with Bob Smith. "
    "The Bank of England raised rates on March 3, 2021. "
    "Dr. Jane Goodall studied chimpanzees in Tanzania. It was a long day."
)


def nodes_by_name(graph: KnowledgeGraph) -> dict[str, tuple[str, str]]:
    return {n.name: (n.id, n.type) for n in graph.nodes}


def relations(graph: KnowledgeGraph) -> set[tuple[str, str, str]]:
    names = {n.id: n.name for n in graph.nodes}
    return {(names[e.source_node_id], e.relationship_name, names[e.target_node_id]) for e in graph.edges}


def test_names_and_types_are_found() -> None:
    found = nodes_by_name(offline_graph(STORY))
    assert found["Alice"][1] == "person"
    assert found["Acme Corp"][1] == "organization"
    assert found["Bob Smith"][1] == "person"
    assert found["Bank of England"][1] == "organization"
    assert found["Jane Goodall"][1] == "person"
    assert found["Tanzania"][1] == "place"
    assert found["1999"][1] == "date"
    assert found["March 3, 2021"][1] == "date"


def test_sentence_initial_stop_words_and_titles_are_not_entities() -> None:
    names = set(nodes_by_name(offline_graph(STORY)))
    assert not names & {"The", "She", "It", "The Bank of England", "CEO", "Dr", "Dr. Jane Goodall"}


def test_relationships_come_from_the_words_between_mentions() -> None:
    found = relations(offline_graph(STORY))
    assert ("Alice", "ceo_of", "Acme Corp") in found
    assert ("Acme Corp", "founded_in", "1999") in found
    assert ("Bank of England", "raised_rates_on", "March 3, 2021") in found


def test_long_or_empty_gaps_fall_back_to_related_to() -> None:
    graph = offline_graph(
        "Alice, who everyone agreed had spent far too many years waiting, finally met Bob. "
        "Carol and Dave left."
    )
    found = relations(graph)
    assert ("Alice", "related_to", "Bob") in found
    assert ("Carol", "related_to", "Dave") in found


def test_legal_suffix_and_short_name_are_one_node() -> None:
    graph = offline_graph("Acme Inc hired Alice. Later Acme moved to Paris.")
    assert [n.name for n in graph.nodes] == ["Acme Inc", "Alice", "Paris"]
    assert ("Acme Inc", "moved_to", "Paris") in relations(graph)


def test_edges_use_declared_nodes_and_carry_the_sentence() -> None:
    graph = offline_graph(STORY)
    ids = {n.id for n in graph.nodes}
    assert len(ids) == len(graph.nodes)
    for edge in graph.edges:
        assert {edge.source_node_id, edge.target_node_id} <= ids
        assert edge.description and edge.description in STORY


def test_summary_and_description_are_bounded() -> None:
    summary = offline_summary(STORY * 5)
    assert summary.summary.startswith("Alice is the CEO of Acme Corp.")
    assert len(summary.summary) <= 200
    assert len(summary.description) <= 100
    assert offline_summary("Short text.").summary == "Short text."


def test_output_is_deterministic_and_valid() -> None:
    first = offline_chunk_extraction(STORY)
    assert first.model_dump() == offline_chunk_extraction(STORY).model_dump()
    assert ChunkExtraction.model_validate_json(first.model_dump_json()) == first


def test_output_feeds_build_graph() -> None:
    dataset, chunk = uuid.uuid4(), uuid.uuid4()
    draft = build_graph(dataset, [(chunk, STORY)], [offline_chunk_extraction(STORY)])
    assert {e.name for e in draft.entities} >= {"Alice", "Acme Corp", "Bank of England"}
    assert any(e.relationship == "ceo_of" for e in draft.edges)


def test_empty_text_gives_an_empty_graph() -> None:
    result = offline_chunk_extraction("   ")
    assert result.graph.nodes == [] and result.graph.edges == []
    assert result.summary.summary == ""


def test_initials_stay_inside_a_name_and_end_no_sentence():
    graph = offline_chunk_extraction("Blade Runner is based on a novel by Philip K. Dick. "
                                     "Harry Potter is a series by J. K. Rowling.").graph
    names = {n.name for n in graph.nodes}
    assert {"Philip K. Dick", "J. K. Rowling"} <= names
