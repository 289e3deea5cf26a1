import pytest
from pydantic import ValidationError

from engram.pipelines.maintenance.contradictions import (
    ContradictionEdge,
    facts_text,
    judge,
    needs_check,
    select_facts,
)
from engram.pipelines.maintenance.supersession import EdgeFact
from engram.prompts.contradiction import Contradiction, ContradictionList, contradiction_prompt

NAMES = {"alice": "Alice", "bob": "Bob", "paris": "Paris", "berlin": "Berlin", "acme": "Acme", "doc": "Doc"}


def e(eid, s, t, rel):
    return EdgeFact(eid, s, t, rel)


def born_facts():
    edges = [e("e1", "alice", "paris", "born_in"), e("e2", "alice", "berlin", "born_in"),
             e("e3", "bob", "paris", "born_in")]
    return select_facts(edges, NAMES, touched={"alice", "bob"})


def claims(*items):
    return ContradictionList(contradictions=[
        Contradiction(first_fact_id=a, second_fact_id=b, reason="r", confidence=c) for a, b, c in items
    ])


def test_select_renders_facts_in_order():
    facts = born_facts()
    assert [f.fid for f in facts] == ["F1", "F2", "F3"]
    assert facts_text(facts) == "[F1] Alice born in Paris\n[F2] Alice born in Berlin\n[F3] Bob born in Paris"


def test_structural_relationships_are_skipped_and_every_fact_recall_serves_is_checked():
    # One fact definition (pipelines/facts): is_part_of, made_from, exists_in are facts recall
    # serves, so the check judges them too.
    edges = [e("s1", "doc", "alice", "contains"), e("s2", "alice", "acme", "is_part_of"),
             e("s3", "alice", "acme", "made_from"), e("s4", "alice", "acme", "exists_in"),
             e("s5", "alice", "bob", "contradicts"), e("k", "alice", "acme", "works_at")]
    assert [f.edge_id for f in select_facts(edges, NAMES, {"alice"})] == ["s2", "s3", "s4", "k"]


def test_needs_a_touched_named_endpoint():
    edges = [e("a", "bob", "acme", "works_at"), e("b", "ghost", "acme", "works_at"),
             e("c", "acme", "alice", "employs")]
    # bob not touched; ghost touched but unnamed; alice touched as target
    facts = select_facts(edges, NAMES, {"ghost", "alice"})
    assert [f.edge_id for f in facts] == ["c"]


def test_max_facts_caps():
    edges = [e(f"e{i}", "alice", f"city{i}", "visited") for i in range(10)]
    facts = select_facts(edges, NAMES, {"alice"}, max_facts=3)
    assert [f.fid for f in facts] == ["F1", "F2", "F3"]
    assert facts[0].text == "Alice visited city0"  # unnamed far end rendered by id


def test_needs_check_requires_two_facts():
    assert not needs_check([])
    assert not needs_check(born_facts()[:1])
    assert needs_check(born_facts()[:2])


def test_confident_contradiction_is_kept_with_engram_rendering():
    [edge] = judge(born_facts(), claims(("F1", "F2", 0.95)))
    assert isinstance(edge, ContradictionEdge)
    assert edge.relationship == "contradicts"
    assert edge.properties == {"first_fact": "Alice born in Paris", "second_fact": "Alice born in Berlin",
                               "reason": "r", "confidence": 0.95}
    assert (edge.first_edge_id, edge.second_edge_id) == ("e1", "e2")


def test_model_text_never_used_for_facts():
    result = ContradictionList(contradictions=[
        Contradiction(first_fact_id="[F1]", second_fact_id="f2", reason="Alice was born in London", confidence=0.9)])
    [edge] = judge(born_facts(), result)
    assert edge.properties["first_fact"] == "Alice born in Paris"


def test_low_confidence_is_ignored():
    assert judge(born_facts(), claims(("F1", "F2", 0.2))) == []
    assert len(judge(born_facts(), claims(("F1", "F2", 0.5)))) == 1  # threshold inclusive
    assert judge(born_facts(), claims(("F1", "F2", 0.6)), min_confidence=0.7) == []


def test_invented_id_is_ignored():
    assert judge(born_facts(), claims(("F1", "F9", 0.9), ("X", "F2", 0.9))) == []


def test_self_pair_is_ignored():
    assert judge(born_facts(), claims(("F2", "F2", 0.99))) == []


def test_endpoints_are_sources_when_they_differ():
    [edge] = judge(born_facts(), claims(("F2", "F3", 0.9)))  # alice vs bob
    assert (edge.source_id, edge.target_id) == ("alice", "bob")


def test_endpoints_are_targets_when_sources_match():
    [edge] = judge(born_facts(), claims(("F1", "F2", 0.9)))  # both alice
    assert (edge.source_id, edge.target_id) == ("paris", "berlin")


def test_facts_joining_the_same_pair_are_skipped():
    edges = [e("x", "alice", "acme", "works_at"), e("y", "acme", "alice", "fired")]
    facts = select_facts(edges, NAMES, {"alice"})
    assert judge(facts, claims(("F1", "F2", 0.9))) == []


def test_duplicate_pairs_collapse_to_most_confident():
    out = judge(born_facts(), claims(("F1", "F2", 0.6), ("F2", "F1", 0.9), ("F1", "F2", 0.7)))
    assert len(out) == 1
    assert out[0].properties["confidence"] == 0.9


def test_contradiction_confidence_is_bounded():
    with pytest.raises(ValidationError):
        Contradiction(first_fact_id="F1", second_fact_id="F2", reason="", confidence=1.5)


def test_prompt_carries_the_facts_and_rules():
    messages = contradiction_prompt("[F1] a b c")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "[F1] a b c" in messages[1]["content"]
    system = messages[0]["content"].lower()
    assert "same time" in system and "paraphrase" in system and "itself" in system and "empty list" in system


def test_superseded_edges_are_history_not_rivals():
    rows = [{"id": "old", "source_id": "alice", "target_id": "acme", "relationship": "ceo_of", "superseded": True},
            {"id": "new", "source_id": "bob", "target_id": "acme", "relationship": "ceo_of", "superseded": False}]
    tagged = EdgeFact("tag", "alice", "paris", "lives_in", properties={"superseded": True})
    facts = select_facts(rows + [tagged], NAMES, {"alice", "bob", "acme"})
    assert [f.edge_id for f in facts] == ["new"]


def test_facts_whose_validity_ended_are_history_not_rivals():
    from datetime import UTC, datetime

    rows = [{"id": "old", "source_id": "maria", "target_id": "springfield", "relationship": "mayor_of",
             "valid_to": datetime(2022, 1, 1, tzinfo=UTC)},
            {"id": "new", "source_id": "tom", "target_id": "springfield", "relationship": "mayor_of",
             "valid_to": None},
            {"id": "later", "source_id": "ann", "target_id": "springfield", "relationship": "mayor_of",
             "valid_to": datetime(2031, 1, 1, tzinfo=UTC)}]
    names = {"maria": "Maria", "tom": "Tom", "ann": "Ann", "springfield": "Springfield"}
    now = datetime(2027, 1, 1, tzinfo=UTC)
    assert [f.edge_id for f in select_facts(rows, names, {"springfield"}, now=now)] == ["new", "later"]
