"""Interval-aware supersession (pipelines/maintenance/supersession.py), pure."""

import itertools
import uuid
from datetime import UTC, datetime

import pytest

from engram.pipelines.maintenance.supersession import (
    Assertion,
    assertions_of,
    edge_changes,
    interval_changes,
    judge,
    normalise_functional,
)

NOW = datetime(2027, 6, 1, tzinfo=UTC)
MAYOR = {"mayor_of": "target"}


def y(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


def fact(iid, person, city="springfield", *, start=None, end=None, ended=False, asserted=None, learned=None,
         rel="mayor_of", edge=None):
    return Assertion(iid, edge or f"{person}>{city}", person, city, rel, valid_from=start, valid_to=end,
                     ended=ended, asserted=asserted, learned=learned or y(2026, 12, 1))


def verdicts(facts, functional=MAYOR, **kw):
    j = judge(facts, functional, now=NOW, **kw)
    return {v.id: v for v in j.intervals}, {v.id: v for v in j.edges}


def test_normalise_functional():
    assert normalise_functional(["ceo_of", "Lives In"]) == {"ceo_of": "source", "lives_in": "source"}
    assert normalise_functional({"ceo_of": "target"}) == {"ceo_of": "target"}
    assert normalise_functional(None) == {}
    with pytest.raises(ValueError):
        normalise_functional({"ceo_of": "both"})


def test_re_election_a_b_a():
    facts = [fact("m1", "maria", start=y(2015)), fact("t1", "tom", start=y(2022)), fact("m2", "maria", start=y(2026))]
    ivs, edges = verdicts(facts)
    assert (ivs["m1"].ends_at, ivs["m1"].superseded_by) == (y(2022), "t1")
    assert (ivs["t1"].ends_at, ivs["t1"].superseded_by) == (y(2026), "m2")
    assert (ivs["m2"].ends_at, ivs["m2"].superseded_by) == (None, None)
    maria, tom = edges["maria>springfield"], edges["tom>springfield"]
    assert not maria.superseded and maria.valid_from == y(2015) and maria.valid_to is None
    assert tom.superseded and tom.superseded_by == "maria>springfield" and tom.valid_to == y(2026)
    assert tom.supersession_reason == "superseded by a more recent 'mayor_of' assertion"


def test_explicit_past_interval_arriving_after_the_current_holder():
    facts = [fact("t1", "tom", start=y(2022)), fact("m1", "maria", start=y(2015), end=y(2022), ended=True)]
    ivs, edges = verdicts(facts)
    assert ivs["m1"].ends_at == y(2022) and ivs["t1"].ends_at is None
    assert not edges["tom>springfield"].superseded
    assert edges["maria>springfield"].valid_to == y(2022)  # history, never current


def test_open_interval_holds_until_now():
    ivs, edges = verdicts([fact("a", "ann", start=y(2022))])
    assert ivs["a"].ends_at is None and not edges["ann>springfield"].superseded


def test_explicit_end_with_nobody_after_is_history_not_superseded():
    ivs, edges = verdicts([fact("b", "bob", end=y(2019), ended=True, asserted=y(2019))])
    e = edges["bob>springfield"]
    assert ivs["b"].ends_at == y(2019) and e.valid_to == y(2019) and not e.superseded


def test_former_without_dates_is_never_current():
    facts = [fact("a", "alice", "acme", ended=True, rel="ceo_of"), fact("b", "bob", "acme", start=y(2024), rel="ceo_of")]
    ivs, edges = verdicts(facts, {"ceo_of": "target"})
    assert ivs["a"].ends_at == ivs["a"].starts_at  # over when Engram learned it; no known span
    assert ivs["b"].ends_at is None and not edges["bob>acme"].superseded
    assert edges["alice>acme"].superseded and edges["alice>acme"].superseded_by == "bob>acme"


def test_former_with_a_start_ends_at_its_successor():
    facts = [fact("a", "alice", "acme", start=y(2018), ended=True, rel="ceo_of"),
             fact("b", "bob", "acme", start=y(2021), rel="ceo_of")]
    ivs, _ = verdicts(facts, {"ceo_of": "target"})
    assert (ivs["a"].ends_at, ivs["a"].superseded_by) == (y(2021), "b")


def test_month_and_day_precision_order_within_one_year():
    facts = [fact("a", "alice", start=y(2024, 3, 10)), fact("b", "bob", start=y(2024, 3, 3)),
             fact("c", "carol", start=y(2024))]
    ivs, edges = verdicts(facts)
    assert ivs["c"].superseded_by == "b" and ivs["b"].superseded_by == "a" and ivs["a"].ends_at is None
    assert [k for k, e in edges.items() if not e.superseded] == ["alice>springfield"]


def test_years_before_1900():
    facts = [fact("a", "adams", "usa", start=y(1797), end=y(1801), rel="president_of"),
             fact("j", "jefferson", "usa", start=y(1801), end=y(1809), rel="president_of")]
    ivs, edges = verdicts(facts, {"president_of": "target"})
    assert ivs["a"].ends_at == y(1801) and ivs["a"].superseded_by == "j" and ivs["j"].ends_at == y(1809)


def test_two_functional_relationships_on_different_ends():
    facts = [fact("c1", "acme", "alice", start=y(2020), rel="ceo_of"), fact("c2", "acme", "bob", start=y(2024), rel="ceo_of"),
             fact("l1", "bob", "paris", start=y(2010), rel="lives_in"), fact("l2", "bob", "rome", start=y(2023), rel="lives_in"),
             fact("m1", "maria", "springfield", start=y(2015)), fact("m2", "tom", "springfield", start=y(2022))]
    ivs, _ = verdicts(facts, {"ceo_of": "source", "lives_in": "source", "mayor_of": "target"})
    assert ivs["c1"].superseded_by == "c2" and ivs["l1"].superseded_by == "l2" and ivs["m1"].superseded_by == "m2"
    # Declared on the other end, nothing conflicts: acme has one CEO each, bob one home each.
    ivs, _ = verdicts(facts, {"ceo_of": "target", "lives_in": "target"})
    assert all(v.superseded_by is None for v in ivs.values())


def test_same_value_reasserted_is_not_a_conflict_and_undeclared_never_collapse():
    facts = [fact("a", "ann", start=y(2015)), fact("b", "ann", start=y(2020), edge="ann>springfield")]
    _, edges = verdicts(facts)
    assert not edges["ann>springfield"].superseded
    assert judge([fact("m", "x", rel="mentions"), fact("n", "y", rel="mentions")], MAYOR, now=NOW).intervals == []


def test_undated_facts_fall_back_to_when_engram_learned_them():
    facts = [fact("a", "alice", learned=y(2026, 1, 1)), fact("b", "bob", learned=y(2026, 2, 1))]
    ivs, _ = verdicts(facts)
    assert ivs["a"].superseded_by == "b" and ivs["a"].ends_at == y(2026, 2, 1)


def test_only_touched_groups_are_judged():
    facts = [fact("m1", "maria", start=y(2015)), fact("t1", "tom", start=y(2022))]
    assert judge(facts, MAYOR, touched={"elsewhere"}, now=NOW).intervals == []
    assert judge(facts, MAYOR, touched={"maria"}, now=NOW).intervals == []  # not the grouping end
    assert len(judge(facts, MAYOR, touched={"springfield"}, now=NOW).intervals) == 2


def test_outcome_does_not_depend_on_input_order():
    base = [fact("m1", "maria", start=y(2015)), fact("t1", "tom", start=y(2022)),
            fact("m2", "maria", start=y(2015), end=y(2022), ended=True), fact("m3", "maria", start=y(2026))]
    outcomes = set()
    for order in itertools.permutations(base):
        ivs, edges = verdicts(list(order))
        outcomes.add((tuple(sorted((k, v.ends_at, v.superseded_by) for k, v in ivs.items())),
                      tuple(sorted((k, v.superseded, v.valid_to) for k, v in edges.items()))))
    assert len(outcomes) == 1


def test_a_second_pass_changes_nothing():
    facts = [fact("m1", "maria", start=y(2015)), fact("t1", "tom", start=y(2022)), fact("m2", "maria", start=y(2026))]
    first = judge(facts, MAYOR, now=NOW)
    assert len(interval_changes(first, facts)) == 3
    stored = [Assertion(**{**vars(a), "functional": True, "starts_at": v.starts_at, "ends_at": v.ends_at,
                           "superseded_by": v.superseded_by})
              for a in facts for v in first.intervals if v.id == a.id]
    columns = {e.id: vars(e) for e in first.edges}
    second = judge(stored, MAYOR, now=NOW)
    assert interval_changes(second, stored) == [] and edge_changes(second, columns) == []


def test_edges_without_interval_rows_get_one():
    e1, e2 = uuid.uuid4(), uuid.uuid4()
    rows = [{"id": e1, "source_id": "acme", "target_id": "alice", "relationship": "ceo_of", "updated_at": y(2020)},
            {"id": e2, "source_id": "acme", "target_id": "bob", "relationship": "ceo_of", "updated_at": y(2024)}]
    facts = assertions_of(rows, [])
    ivs = judge(facts, ["ceo_of"], now=NOW).intervals
    assert [v.superseded_by for v in ivs] == [facts[1].id, None]
