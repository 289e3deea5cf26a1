"""Extract stage: LLM answers become deterministic, merged graph rows (SPEC section 4)."""

from __future__ import annotations

import uuid

import pytest

from engram.models.graph import ChunkExtraction, Edge, KnowledgeGraph, Node, SummarizedContent
from engram.pipelines.cognify.extract import GraphDraft, build_graph
from engram.pipelines.ids import edge_id, entity_id, entity_type_id, summary_id

DATASET = uuid.UUID("00000000-0000-0000-0000-0000000000d1")
C1 = uuid.UUID("00000000-0000-0000-0000-0000000000c1")
C2 = uuid.UUID("00000000-0000-0000-0000-0000000000c2")


def extraction(nodes: list[Node], edges: list[Edge] = (), summary: str = "a summary") -> ChunkExtraction:
    return ChunkExtraction(
        graph=KnowledgeGraph(nodes=list(nodes), edges=list(edges)),
        summary=SummarizedContent(summary=summary),
    )


def build(*extractions: ChunkExtraction) -> GraphDraft:
    chunk_ids = [C1, C2][: len(extractions)]
    return build_graph(DATASET, [(c, f"text of {c}") for c in chunk_ids], list(extractions))


def entity_by_name(draft: GraphDraft, name: str):
    return [e for e in draft.entities if e.name == name]


def test_same_entity_in_two_chunks_is_one_row_with_first_non_empty_description() -> None:
    draft = build(
        extraction([Node(id="a", name="Alice", type="person")]),
        extraction([Node(id="x", name="alice", type="person", description="CEO of Acme")]),
    )
    (alice,) = draft.entities
    assert alice.id == entity_id(DATASET, "Alice")
    assert alice.name == "Alice"  # the first spelling seen
    assert alice.description == "CEO of Acme"

    later = build(
        extraction([Node(id="a", name="Alice", description="CEO of Acme")]),
        extraction([Node(id="a", name="Alice", description="a different story")]),
    )
    assert later.entities[0].description == "CEO of Acme"


def test_each_chunk_gets_a_contains_edge_per_entity() -> None:
    draft = build(
        extraction([Node(id="a", name="Alice", description="CEO of Acme"), Node(id="b", name="Acme")]),
        extraction([Node(id="a", name="Alice")]),
    )
    contains = [e for e in draft.edges if e.relationship == "contains"]
    alice, acme = entity_id(DATASET, "Alice"), entity_id(DATASET, "Acme")
    assert {(e.source_id, e.target_id) for e in contains} == {(C1, alice), (C1, acme), (C2, alice)}
    texts = {(e.source_id, e.target_id): e.edge_text for e in contains}
    assert texts[(C1, alice)] == "Document chunk mentions Alice: CEO of Acme"
    assert texts[(C1, acme)] == "Document chunk mentions Acme"
    # the chunk's description of the entity is the edge's own field too (forget reads it, not the text)
    described = {(e.source_id, e.target_id): e.properties.get("description") for e in contains}
    assert described == {(C1, alice): "CEO of Acme", (C1, acme): None, (C2, alice): None}
    c1_alice = next(e for e in contains if e.source_id == C1 and e.target_id == alice)
    assert c1_alice.provenance == [C1]
    assert c1_alice.id == edge_id(DATASET, C1, alice, "contains")


def test_same_name_with_distinct_local_ids_stays_two_entities() -> None:
    nodes = [
        Node(id="p", name="Jordan", type="person", description="a basketball player"),
        Node(id="c", name="Jordan", type="place", description="a country"),
    ]
    edges = [Edge(source_node_id="p", target_node_id="c", relationship_name="visited")]
    draft = build(extraction(nodes, edges))
    jordans = entity_by_name(draft, "Jordan")
    assert len(jordans) == 2
    assert jordans[0].id == entity_id(DATASET, "Jordan")
    assert jordans[1].id != jordans[0].id
    assert build(extraction(nodes, edges)).entities[1].id == jordans[1].id  # deterministic
    (visited,) = [e for e in draft.edges if e.relationship == "visited"]
    assert (visited.source_id, visited.target_id) == (jordans[0].id, jordans[1].id)


def test_duplicate_local_id_keeps_the_first_node() -> None:
    nodes = [Node(id="n1", name="Alice"), Node(id="n1", name="Bob"), Node(id="n2", name="Acme")]
    edges = [Edge(source_node_id="n1", target_node_id="n2", relationship_name="works_at")]
    draft = build(extraction(nodes, edges))
    assert [e.name for e in draft.entities] == ["Alice", "Acme"]
    (works,) = [e for e in draft.edges if e.relationship == "works_at"]
    assert works.source_id == entity_id(DATASET, "Alice")


def test_blank_names_and_dangling_edges_are_dropped() -> None:
    nodes = [Node(id="a", name="Alice"), Node(id="b", name="   ")]
    edges = [
        Edge(source_node_id="a", target_node_id="b", relationship_name="knows"),
        Edge(source_node_id="a", target_node_id="ghost", relationship_name="knows"),
    ]
    draft = build(extraction(nodes, edges))
    assert [e.name for e in draft.entities] == ["Alice"]
    assert [e.relationship for e in draft.edges] == ["contains"]


def test_relationship_is_normalised_and_edge_text_reads_as_a_fact() -> None:
    nodes = [Node(id="a", name="Alice"), Node(id="b", name="Acme Corp")]
    edges = [
        Edge(source_node_id="a", target_node_id="b", relationship_name="CEO of", description="since 2020"),
        Edge(source_node_id="b", target_node_id="a", relationship_name="employs"),
    ]
    draft = build(extraction(nodes, edges))
    facts = {e.relationship: e for e in draft.edges if e.relationship != "contains"}
    assert facts["ceo_of"].edge_text == "Alice ceo of Acme Corp: since 2020"
    assert facts["ceo_of"].properties == {"description": "since 2020"}
    assert facts["employs"].edge_text == "Acme Corp employs Alice"
    alice, acme = entity_id(DATASET, "Alice"), entity_id(DATASET, "Acme Corp")
    assert facts["ceo_of"].id == edge_id(DATASET, alice, acme, "ceo_of")


def test_same_edge_in_two_chunks_merges_provenance_in_order() -> None:
    nodes = [Node(id="a", name="Alice"), Node(id="b", name="Acme")]
    edge = Edge(source_node_id="a", target_node_id="b", relationship_name="founded")
    twice = extraction(nodes, [edge, edge])
    draft = build(twice, extraction(nodes, [Edge(source_node_id="a", target_node_id="b", relationship_name="Founded")]))
    founded = [e for e in draft.edges if e.relationship == "founded"]
    assert len(founded) == 1
    assert founded[0].provenance == [C1, C2]


def test_later_description_fills_an_edge_that_had_none() -> None:
    nodes = [Node(id="a", name="Alice"), Node(id="b", name="Acme")]
    draft = build(
        extraction(nodes, [Edge(source_node_id="a", target_node_id="b", relationship_name="founded")]),
        extraction(nodes, [Edge(source_node_id="a", target_node_id="b", relationship_name="founded", description="in 1999")]),
    )
    (founded,) = [e for e in draft.edges if e.relationship == "founded"]
    assert founded.edge_text == "Alice founded Acme: in 1999"


def test_entity_types_are_unique_rows_with_type_ids() -> None:
    draft = build(
        extraction([Node(id="a", name="Alice", type="Person"), Node(id="b", name="Bob", type="person")]),
        extraction([Node(id="c", name="Acme", type="organization"), Node(id="d", name="Idea", type="")]),
    )
    assert [(t.id, t.name) for t in draft.entity_types] == [
        (entity_type_id(DATASET, "person"), "person"),
        (entity_type_id(DATASET, "organization"), "organization"),
        (entity_type_id(DATASET, "concept"), "concept"),
    ]
    alice = entity_by_name(draft, "Alice")[0]
    assert (alice.type_id, alice.type_name) == (entity_type_id(DATASET, "person"), "person")


def test_one_summary_per_chunk() -> None:
    draft = build(extraction([], summary="First chunk summary."), extraction([], summary="  "))
    assert [(s.id, s.chunk_id) for s in draft.summaries] == [(summary_id(C1), C1), (summary_id(C2), C2)]
    assert draft.summaries[0].text == "First chunk summary."
    assert draft.summaries[1].text == f"text of {C2}"  # a blank summary falls back to the chunk


def test_entities_are_shared_across_documents_of_a_dataset() -> None:
    one = build_graph(DATASET, [(C1, "x")], [extraction([Node(id="a", name="Bank of England")])])
    two = build_graph(DATASET, [(C2, "y")], [extraction([Node(id="z", name="bank of  England")])])
    assert one.entities[0].id == two.entities[0].id


def test_misaligned_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="must align"):
        build_graph(DATASET, [(C1, "x"), (C2, "y")], [extraction([])])


def test_a_relationship_name_longer_than_its_column_is_invalid_llm_output() -> None:
    from pydantic import ValidationError

    from engram.models.graph import RELATIONSHIP_MAX_LENGTH

    Edge(source_node_id="a", target_node_id="b", relationship_name="r" * RELATIONSHIP_MAX_LENGTH)
    with pytest.raises(ValidationError, match="relationship_name"):
        Edge(source_node_id="a", target_node_id="b", relationship_name="r" * (RELATIONSHIP_MAX_LENGTH + 1))


def test_a_draft_without_intervals_has_the_same_rows_and_texts_and_no_intervals() -> None:
    from engram.pipelines.cognify.embedding import texts_to_embed

    chunks = [(C1, "Alice Moreau joined Acme in 2019 and left in 2021."), (C2, "Acme moved to Lyon in March 2020.")]
    extractions = [
        extraction([Node(id="a", name="Alice Moreau", type="person"), Node(id="b", name="Acme", type="company")],
                   [Edge(source_node_id="a", target_node_id="b", relationship_name="worked at",
                         description="from 2019 to 2021")]),
        extraction([Node(id="b", name="Acme", type="company"), Node(id="l", name="Lyon", type="city")],
                   [Edge(source_node_id="b", target_node_id="l", relationship_name="moved to")]),
    ]
    full = build_graph(DATASET, chunks, extractions, title="Acme")
    bare = build_graph(DATASET, chunks, extractions, title="Acme", intervals=False)
    assert any(e.intervals for e in full.edges)  # the dates were read: the comparison means something
    assert not any(e.intervals for e in bare.edges)
    assert texts_to_embed([], bare) == texts_to_embed([], full)
    assert [e.id for e in bare.edges] == [e.id for e in full.edges]


def test_a_fact_loses_its_description_by_its_own_field_not_by_the_first_colon() -> None:
    from engram.pipelines.facts import fact_text, without_description

    text = fact_text("Star Wars: A New Hope", "directed_by", "George Lucas", "the 1977 film")
    assert text == "Star Wars: A New Hope directed by George Lucas: the 1977 film"
    assert without_description(text, "the 1977 film") == "Star Wars: A New Hope directed by George Lucas"
    bare = fact_text("Star Wars: A New Hope", "directed_by", "George Lucas")
    assert without_description(bare, None) == bare  # no description: the text stays whole
