import uuid

import pytest

from engram.pipelines.facts import row_fact_text
from engram.pipelines.recall.graph import conflicts_for, same_fact, score_rows, triplet_score

A, ACME, B, Y1962, Y1958 = (uuid.uuid4() for _ in range(5))


def _row(source="Alice Moreau", rel="ceo_of", target="Acme Robotics", sid=A, tid=ACME, **kw):
    return {"id": uuid.uuid4(), "source_name": source, "relationship": rel, "target_name": target,
            "source_id": sid, "target_id": tid, **kw}


def _contradicts(sid, tid, first, second, reason="only one at a time", confidence=0.9):
    return {"id": uuid.uuid4(), "source_id": sid, "target_id": tid,
            "properties": {"first_fact": first, "second_fact": second, "reason": reason, "confidence": confidence}}


def test_fact_text_weighs_more_than_endpoint_names():
    assert triplet_score(1.0, 0.0, 0.0) == pytest.approx(0.6)
    assert triplet_score(0.0, 1.0, 1.0) == pytest.approx(0.4)
    assert triplet_score(None, None, None) == 0.0


def test_an_unspecific_relationship_ranks_below_a_specific_one_of_equal_similarity():
    assert triplet_score(0.5, 0.5, 0.5, "related_to") < triplet_score(0.5, 0.5, 0.5, "ceo_of")


def test_score_rows_orders_best_first_and_deterministically():
    rows = [_row(edge_sim=0.2), _row(source="Bob", edge_sim=0.9), _row(source="Carol", edge_sim=0.2)]
    ranked = score_rows(rows)
    assert [r["source_name"] for r in ranked] == ["Bob", "Alice Moreau", "Carol"]
    assert ranked[0]["score"] == pytest.approx(0.54)


def test_render_fact_spells_the_relationship_in_words():
    assert row_fact_text(_row()) == "Alice Moreau ceo of Acme Robotics"


def test_same_fact_accepts_other_wordings_that_keep_the_order():
    row = _row()
    assert same_fact(row, "Alice Moreau ceo of Acme Robotics")
    assert same_fact(row, "alice_moreau ceo_of acme_robotics")
    assert same_fact(row, "Alice Moreau is the CEO of Acme Robotics (2020)")
    assert not same_fact(row, "Acme Robotics ceo of Alice Moreau")  # reversed
    assert not same_fact(row, "Bob ceo of Acme Robotics")
    assert not same_fact(row, None)


def test_a_contradiction_naming_the_fact_gives_the_other_fact():
    alice, bob = _row(), _row(source="Bob", sid=B)
    c = _contradicts(A, B, "Alice Moreau ceo of Acme Robotics", "Bob ceo of Acme Robotics")
    assert conflicts_for(alice, [c]) == [{"fact": "Bob ceo of Acme Robotics", "reason": "only one at a time",
                                          "confidence": 0.9, "edge_id": str(c["id"])}]
    assert [x["fact"] for x in conflicts_for(bob, [c])] == ["Alice Moreau ceo of Acme Robotics"]


def test_a_contradiction_touching_an_endpoint_but_about_another_fact_is_not_attached():
    born = _row(rel="born_in", target="Norwick")
    c = _contradicts(A, B, "Alice Moreau ceo of Acme Robotics", "Bob ceo of Acme Robotics")
    assert conflicts_for(born, [c]) == []


def test_a_contradiction_between_the_same_two_entities_is_attached_either_way_round():
    row = _row(source="Greyfen Dam", rel="built_in", target="1962", sid=Y1958, tid=Y1962)
    forward = _contradicts(Y1958, Y1962, "dam finished 1962", "dam begun 1958")  # neither wording matches
    backward = _contradicts(Y1962, Y1958, "dam finished 1962", "dam begun 1958")
    for c in (forward, backward):
        [conflict] = conflicts_for(row, [c])
        assert conflict["fact"] == "dam begun 1958"  # the fact less like this one


def test_an_unrelated_contradiction_is_ignored():
    c = _contradicts(uuid.uuid4(), uuid.uuid4(), "Alice Moreau ceo of Acme Robotics", "x")
    assert conflicts_for(_row(), [c]) == []


def test_recorded_fact_edge_ids_match_exactly_whatever_the_wording():
    alice, bob, born = _row(), _row(source="Bob", sid=B), _row(rel="born_in", target="Norwick")
    c = _contradicts(A, B, "first wording", "second wording")
    c["properties"].update(first_edge_id=str(alice["id"]), second_edge_id=str(bob["id"]))
    assert [x["fact"] for x in conflicts_for(alice, [c])] == ["second wording"]
    assert [x["fact"] for x in conflicts_for(bob, [c])] == ["first wording"]
    assert conflicts_for(born, [c]) == []  # shares an endpoint, but is not one of the judged facts
