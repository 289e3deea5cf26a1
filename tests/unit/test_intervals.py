"""An end stated alone closes the open statement of its edge (issue 36 item 4), pure: the date
rule, the spans of one edge (pipelines/intervals.py), supersession on them, and how a fact's
period reads."""

import itertools
from datetime import UTC, datetime

from engram.adapters.llm.offline import offline_graph
from engram.pipelines.dates import Stated, aspect_words, stated_interval, when
from engram.pipelines.intervals import Statement, spans, unjudged_spans
from engram.pipelines.maintenance.supersession import Assertion, judge
from engram.pipelines.recall.timeline import period

NOW = datetime(2027, 6, 1, tzinfo=UTC)
LEARNED = datetime(2026, 12, 1, tzinfo=UTC)


def y(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


def stmt(iid, start=None, end=None, ended=False, asserted=None):
    return Statement(iid, start, end, ended or end is not None, asserted or end or start, LEARNED)


# ------------------------------------------------------------------ the date rule


def test_a_verb_that_ends_a_fact_makes_its_date_the_end():
    for text in ("Vestria revoked its signature of the Kessel Accord in 2017.",
                 "Ana Ruiz resigned as CEO of Corvex in 2017.",
                 "Ana Ruiz stepped down as CEO of Corvex in 2017.",
                 "Ana Ruiz left Corvex in 2017.",
                 "Vestria's membership of the Kessel Accord ended in 2017."):
        assert stated_interval(text) == Stated(None, when(2017), True, when(2017)), text
    # A change verb starts a fact even beside one that ends another; since/from start one.
    assert stated_interval("Tom Reed became mayor in 2022 after Maria Lopez resigned.").valid_from == when(2022)
    assert stated_interval("Ana Ruiz has led Corvex since 2010 and never left.").valid_to is None


def test_the_verb_is_not_part_of_the_relationship():
    assert aspect_words(["resigned", "ceo", "of"]) == (["ceo", "of"], False, True)
    assert aspect_words(["stepped", "down", "as", "ceo", "of"]) == (["ceo", "of"], False, True)
    assert aspect_words(["left"]) == (["left"], False, False)  # a phrase made only of it stays


def test_offline_extraction_states_the_end_alone():
    graph = offline_graph("Ana Ruiz resigned as CEO of Corvex in 2017.")
    [edge] = graph.edges
    assert (edge.relationship_name, edge.valid_from, edge.valid_to) == ("ceo_of", None, "2017")


def test_the_texts_date_does_not_contradict_the_models():
    # The model gave the end; the sentence's "in 2017" is that end, not also a start.
    assert Stated(None, when(2017)).merged(Stated(when(2017), None, False, when(2017))) == Stated(
        None, when(2017), True, when(2017))
    # The model dated one fact of "left Oslo for Lima in 2019"; the sentence's end is the other's.
    assert Stated(when(2019)).merged(Stated(None, when(2019), True, when(2019))) == Stated(
        when(2019), None, False, when(2019))
    # A consistent text still fills what the model left out.
    assert Stated(when(2015)).merged(Stated(when(2015), when(2022), True)) == Stated(when(2015), when(2022), True)


# ------------------------------------------------------------------ the spans of one edge


def test_an_end_alone_closes_the_open_statement_and_a_later_start_reopens_it():
    signed, revoked, rejoined = stmt("s", start=y(2008)), stmt("r", end=y(2017)), stmt("j", start=y(2020))
    for order in itertools.permutations([signed, revoked, rejoined]):
        assert spans(order) == {"s": (y(2008), y(2017)), "r": (y(2008), y(2017)), "j": (y(2020), None)}


def test_each_end_closes_the_statements_before_it():
    facts = [stmt("a", start=y(2008)), stmt("b", end=y(2012)), stmt("c", start=y(2015)), stmt("d", end=y(2017)),
             stmt("e", start=y(2010))]  # a restatement inside the first term
    assert spans(facts) == {"a": (y(2008), y(2012)), "e": (y(2010), y(2012)), "b": (y(2008), y(2012)),
                            "c": (y(2015), y(2017)), "d": (y(2015), y(2017))}


def test_an_end_that_closes_nothing():
    assert spans([stmt("r", end=y(2017))]) == {"r": (None, y(2017))}  # held before, since when unknown
    # Said again after the fact had ended: adds no time.
    assert spans([stmt("a", start=y(2008), end=y(2012)), stmt("r", end=y(2017))])["r"] == (y(2017), y(2017))
    # A fact starting after the end is not closed by it.
    assert spans([stmt("j", start=y(2020)), stmt("r", end=y(2017))]) == {"j": (y(2020), None), "r": (None, y(2017))}


def test_stated_ends_are_kept():
    facts = [stmt("a", start=y(2010), end=y(2018)), stmt("r", end=y(2016))]
    assert spans(facts)["a"] == (y(2010), y(2018))


def test_the_end_of_a_stated_range_closes_the_open_statement_too():
    facts = [stmt("s", start=y(2008)), stmt("r", start=y(2008), end=y(2017)), stmt("j", start=y(2020))]
    assert spans(facts) == {"s": (y(2008), y(2017)), "r": (y(2008), y(2017)), "j": (y(2020), None)}


def test_unjudged_spans_are_the_stated_ones_closed_by_an_end_alone():
    facts = [stmt("s", start=y(2010)), stmt("r", end=y(2017)), stmt("x", start=y(2020), end=y(2022))]
    assert unjudged_spans(facts) == {"s": (y(2010), y(2017)), "r": (y(2010), y(2017)), "x": (y(2020), y(2022))}
    # An undated statement stays undated (it is dated by when Engram learned it, if judged).
    assert unjudged_spans([Statement("u", learned=LEARNED)]) == {"u": (None, None)}


# ------------------------------------------------------------------ supersession on them


def fact(iid, source, target, *, start=None, end=None, rel="signatory_of", edge=None):
    return Assertion(iid, edge or f"{source}>{target}", source, target, rel, valid_from=start, valid_to=end,
                     ended=end is not None, asserted=end or start, learned=LEARNED)


def test_treaty_revoked_then_rejoined():
    facts = [fact("n", "norland", "kessel", start=y(2008)), fact("v1", "vestria", "kessel", start=y(2008)),
             fact("v2", "vestria", "kessel", end=y(2017))]
    j = judge(facts, ["signatory_of"], now=NOW)
    ivs, edges = {v.id: v for v in j.intervals}, {v.id: v for v in j.edges}
    assert (ivs["v1"].starts_at, ivs["v1"].ends_at) == (y(2008), y(2017))
    vestria = edges["vestria>kessel"]
    assert (vestria.superseded, vestria.valid_from, vestria.valid_to) == (False, y(2008), y(2017))  # history
    assert edges["norland>kessel"].valid_to is None
    j = judge(facts + [fact("v3", "vestria", "kessel", start=y(2020))], ["signatory_of"], now=NOW)
    ivs, edges = {v.id: v for v in j.intervals}, {v.id: v for v in j.edges}
    assert (ivs["v3"].starts_at, ivs["v3"].ends_at, ivs["v1"].ends_at) == (y(2020), None, y(2017))
    assert edges["vestria>kessel"].valid_to is None and not edges["vestria>kessel"].superseded


def ceo(iid, person, company, **kw):
    return fact(iid, person, company, rel="ceo_of", **kw)


def test_resignation_without_a_successor():
    facts = [ceo("a1", "ana", "corvex", start=y(2010)), ceo("a2", "ana", "corvex", end=y(2017))]
    j = judge(facts, {"ceo_of": "target"}, now=NOW)
    [edge] = j.edges
    assert (edge.superseded, edge.superseded_by, edge.valid_from, edge.valid_to) == (False, None, y(2010), y(2017))
    assert all(v.ends_at == y(2017) and v.superseded_by is None for v in j.intervals)


def test_a_resignation_then_a_successor():
    facts = [ceo("a1", "ana", "corvex", start=y(2010)), ceo("a2", "ana", "corvex", end=y(2017)),
             ceo("b1", "ben", "corvex", start=y(2019))]
    edges = {v.id: v for v in judge(facts, {"ceo_of": "target"}, now=NOW).edges}
    assert edges["ana>corvex"].valid_to == y(2017) and not edges["ana>corvex"].superseded  # ended, not replaced
    assert edges["ben>corvex"].valid_to is None


def test_an_end_alone_closing_nothing_loses_to_any_dated_holder():
    facts = [ceo("a", "alice", "acme", end=y(2019)), ceo("b", "bob", "acme", start=y(2016))]
    ivs = {v.id: v for v in judge(facts, {"ceo_of": "target"}, now=NOW).intervals}
    assert ivs["a"].starts_at is None and (ivs["a"].ends_at, ivs["a"].superseded_by) == (y(2016), "b")


def test_overlapping_employers_are_never_judged():
    facts = [fact("a", "ken", "acme", start=y(2010), end=y(2018), rel="worked_at"),
             fact("g", "ken", "globex", start=y(2015), rel="worked_at")]
    assert judge(facts, {"ceo_of": "target"}, now=NOW).intervals == []
    assert spans([stmt("a", start=y(2010), end=y(2018))])["a"] == (y(2010), y(2018))


# ------------------------------------------------------------------ how a period reads


def row(iid, *, start=None, end=None, starts_at=None, ends_at=None):
    return {"id": iid, "valid_from": start, "valid_from_precision": "year" if start else None, "valid_to": end,
            "valid_to_precision": "year" if end else None, "asserted_at": end or start,
            "asserted_precision": "year", "ended": end is not None, "starts_at": starts_at, "ends_at": ends_at}


def test_period_of_a_revoked_and_rejoined_fact():
    rows = [row("r", end=y(2017), starts_at=y(2008), ends_at=y(2017)),
            row("s", start=y(2008), starts_at=y(2008), ends_at=y(2017)),
            row("j", start=y(2020), starts_at=y(2020))]
    assert period(rows) == "2008\u20132017; again since 2020"
    assert period([row("r", end=y(2017), ends_at=y(2017))]) == "until 2017"
    assert period(rows[1:2] + [row("late", end=y(2019), starts_at=y(2019), ends_at=y(2019))]) == "2008\u20132017"


def test_a_b_a_with_a_resignation_between():
    facts = [fact("m1", "maria", "springfield", start=y(2015), rel="mayor_of"),
             fact("m2", "maria", "springfield", end=y(2020), rel="mayor_of"),
             fact("t1", "tom", "springfield", start=y(2021), rel="mayor_of"),
             fact("m3", "maria", "springfield", start=y(2026), rel="mayor_of")]
    for order in itertools.permutations(facts):
        j = judge(order, {"mayor_of": "target"}, now=NOW)
        ivs, edges = {v.id: v for v in j.intervals}, {v.id: v for v in j.edges}
        assert (ivs["m1"].ends_at, ivs["m1"].superseded_by) == (y(2020), None)  # ended, nobody took over then
        assert (ivs["t1"].ends_at, ivs["t1"].superseded_by) == (y(2026), "m3")
        assert ivs["m3"].ends_at is None and not edges["maria>springfield"].superseded
        assert edges["tom>springfield"].superseded and edges["tom>springfield"].valid_to == y(2026)
