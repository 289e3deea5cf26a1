import copy

import pytest

from engram.pipelines.maintenance.supersession import (
    EdgeFact,
    changed_edges,
    normalise_functional,
    supersede,
)

REASON = "superseded by a more recent 'ceo_of' assertion"
NOW = "2030-01-01T00:00:00"


def edge(eid, source, target, rel="ceo_of", updated_at=None, **props):
    return EdgeFact(eid, source, target, rel, updated_at, dict(props))


def acme_edges():
    return [edge("e1", "acme", "alice", updated_at="2020"), edge("e2", "acme", "bob", updated_at="2024")]


def test_normalise_functional():
    assert normalise_functional(["ceo_of", "Lives In"]) == {"ceo_of": "source", "lives_in": "source"}
    assert normalise_functional({"ceo_of": "target"}) == {"ceo_of": "target"}
    assert normalise_functional(None) == {}
    with pytest.raises(ValueError):
        normalise_functional({"ceo_of": "both"})


def test_no_functional_relationships_changes_nothing():
    assert changed_edges(acme_edges(), [], now=NOW) == []
    assert [e.properties for e in supersede(acme_edges(), None, now=NOW)] == [{}, {}]


def test_no_edges_gives_nothing():
    assert supersede([], ["ceo_of"], now=NOW) == []
    assert changed_edges([], ["ceo_of"], now=NOW) == []


def test_same_target_reasserted_is_not_a_conflict():
    edges = [edge("e1", "acme", "alice", updated_at="2020"), edge("e2", "acme", "alice", updated_at="2024")]
    assert changed_edges(edges, ["ceo_of"], now=NOW) == []


def test_older_ceo_is_superseded_by_newer():
    out = supersede(acme_edges(), ["ceo_of"], touched={"acme"}, now=NOW)
    alice, bob = out
    assert alice.properties == {
        "superseded": True,
        "superseded_by": "e2",
        "supersession_reason": REASON,
        "valid_to": "2024",
    }
    assert bob.properties == {}
    assert [e.id for e in changed_edges(acme_edges(), ["ceo_of"], now=NOW)] == ["e1"]


def test_valid_to_falls_back_to_now_when_winner_undated():
    edges = [edge("e1", "acme", "alice"), edge("e2", "acme", "bob")]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert out[0].properties["valid_to"] == NOW and out[0].properties["superseded_by"] == "e2"


def test_missing_timestamp_counts_as_oldest():
    edges = [edge("e1", "acme", "alice", updated_at="2020"), edge("e2", "acme", "bob")]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert out[1].properties["superseded_by"] == "e1"
    assert out[0].properties == {}


def test_undeclared_relationship_never_collapses():
    edges = [edge("m1", "doc", "alice", "mentions", "2020"), edge("m2", "doc", "bob", "mentions", "2024")]
    assert changed_edges(edges, ["ceo_of"], now=NOW) == []


def test_equal_timestamps_later_position_wins():
    edges = [edge("e1", "acme", "alice", updated_at="2024"), edge("e2", "acme", "bob", updated_at="2024")]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert out[0].properties["superseded_by"] == "e2"
    assert "superseded" not in out[1].properties


def test_input_is_not_mutated():
    edges = [edge("e1", "acme", "alice", updated_at="2020", meta={"k": 1}), edge("e2", "acme", "bob", updated_at="2024")]
    before = copy.deepcopy(edges)
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert edges == before
    assert out[0] is not edges[0]
    out[1].properties["x"] = 1
    assert edges[1].properties == {}


def test_extra_properties_preserved():
    edges = [edge("e1", "acme", "alice", updated_at="2020", origin="press", weight=0.7),
             edge("e2", "acme", "bob", updated_at="2024")]
    props = supersede(edges, ["ceo_of"], now=NOW)[0].properties
    assert props["origin"] == "press" and props["weight"] == 0.7 and props["superseded"] is True


def test_output_keeps_input_order():
    edges = [edge("e2", "acme", "bob", updated_at="2024"), edge("x", "doc", "acme", "mentions"),
             edge("e1", "acme", "alice", updated_at="2020")]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert [e.id for e in out] == ["e2", "x", "e1"]
    assert out[2].properties["superseded_by"] == "e2"


def test_two_subjects_resolved_independently():
    edges = acme_edges() + [edge("g1", "globex", "carol", updated_at="2023"),
                            edge("g2", "globex", "dan", updated_at="2019")]
    out = {e.id: e.properties for e in supersede(edges, ["ceo_of"], now=NOW)}
    assert out["e1"]["superseded_by"] == "e2"
    assert out["g2"]["superseded_by"] == "g1"
    assert out["e2"] == {} and out["g1"] == {}


def test_only_touched_groups_are_checked():
    assert changed_edges(acme_edges(), ["ceo_of"], touched={"globex"}, now=NOW) == []
    assert changed_edges(acme_edges(), ["ceo_of"], touched={"alice"}, now=NOW) == []  # not the source
    assert len(changed_edges(acme_edges(), ["ceo_of"], touched={"acme"}, now=NOW)) == 1


def test_target_mode_groups_by_target():
    edges = [edge("e1", "alice", "acme", updated_at="2020"), edge("e2", "bob", "acme", updated_at="2024")]
    out = supersede(edges, {"ceo_of": "target"}, touched={"acme"}, now=NOW)
    assert out[0].properties["superseded_by"] == "e2"
    assert out[0].properties["supersession_reason"] == REASON
    assert out[1].properties == {}
    assert changed_edges(edges, {"ceo_of": "source"}, now=NOW) == []


def test_dict_edges_are_accepted():
    edges = [
        {"id": "e1", "source_id": "acme", "target_id": "alice", "relationship_name": "ceo_of", "updated_at": "2020"},
        {"id": "e2", "source_id": "acme", "target_id": "bob", "relationship": "ceo_of", "updated_at": "2024",
         "properties": None},
    ]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert isinstance(out[0], EdgeFact)
    assert out[0].properties["superseded_by"] == "e2"
    assert "properties" not in edges[0]


def test_already_superseded_edge_keeps_its_history():
    first = edge("e1", "acme", "alice", updated_at="2020", superseded=True, superseded_by="e2",
                 supersession_reason=REASON, valid_to="2024")
    edges = [first, edge("e2", "acme", "bob", updated_at="2024"), edge("e3", "acme", "carol", updated_at="2025")]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert out[0].properties["superseded_by"] == "e2" and out[0].properties["valid_to"] == "2024"
    assert out[1].properties["superseded_by"] == "e3"
    assert [e.id for e in changed_edges(edges, ["ceo_of"], now=NOW)] == ["e2"]


def test_reasserted_winner_is_reinstated():
    edges = [edge("e1", "acme", "alice", updated_at="2025", superseded=True, superseded_by="e2"),
             edge("e2", "acme", "bob", updated_at="2024")]
    out = supersede(edges, ["ceo_of"], now=NOW)
    assert out[0].properties["superseded"] is False and out[0].properties["superseded_by"] is None
    assert out[1].properties["superseded_by"] == "e1"


def test_mentions_beside_a_conflicting_group_never_collapse():
    edges = acme_edges() + [edge("m1", "acme", "alice", "mentions", "2020"),
                            edge("m2", "acme", "bob", "mentions", "2024")]
    out = {e.id: e.properties for e in supersede(edges, ["ceo_of"], now=NOW)}
    assert out["e1"]["superseded_by"] == "e2"
    assert out["m1"] == {} and out["m2"] == {}


def test_target_side_acceptance_example():
    # (alice, acme, ceo_of, 2020) vs (bob, acme, ceo_of, 2024): a company has one CEO.
    edges = [edge("e1", "alice", "acme", updated_at="2020"), edge("e2", "bob", "acme", updated_at="2024")]
    [changed] = changed_edges(edges, {"ceo_of": "target"}, now=NOW)
    assert changed.id == "e1" and changed.properties == {
        "superseded": True, "superseded_by": "e2", "supersession_reason": REASON, "valid_to": "2024"}
    assert supersede(edges, {"ceo_of": "source"}, now=NOW) == edges  # one CEO-ship per person: no conflict
