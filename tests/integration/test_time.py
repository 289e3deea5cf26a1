"""Time-aware facts end to end with the offline extractor: validity intervals read from the
text, re-assertion, interval-aware supersession, and recall in every lane (issue 15).

Each scenario has its own dataset; documents are remembered one at a time, in the order given.
"""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from time_helpers import (
    EVERY_LANE,
    MAYOR,
    context,
    facts,
    outcome,
    recall,
    remember_in_order,
    triplet_texts,
    whole_dataset_rows,
)

from engram.tasks.client import RunHandle

ELECTED = "Springfield's mayor was Maria Lopez (elected 2015)."
TOOK_OVER = "Tom Reed became mayor of Springfield in 2022."
RE_ELECTED = "Maria Lopez was re-elected mayor of Springfield in 2026."
NOW_QUESTION = "Who is the mayor of Springfield now?"


def y(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def springfield(worker):
    """A -> B -> A: Maria elected 2015, Tom 2022, Maria re-elected 2026."""
    name = _name("springfield")
    remember_in_order(worker.client, name, [ELECTED, TOOK_OVER, RE_ELECTED], MAYOR)
    return name


# ------------------------------------------------------------------ supersession on intervals


def test_re_election_makes_the_first_holder_current_again(springfield, store):
    mayors = facts(store, springfield, "mayor_of")
    maria, tom = mayors["Maria Lopez"], mayors["Tom Reed"]
    assert maria["superseded"] is False and maria["valid_to"] is None and maria["valid_from"] == y(2015)
    assert tom["superseded"] is True and tom["superseded_by_source"] == "Maria Lopez"
    assert (tom["valid_from"], tom["valid_to"]) == (y(2022), y(2026))
    # Re-assertion added an interval instead of overwriting the first one.
    assert [(i["starts_at"], i["ends_at"]) for i in maria["intervals"]] == [(y(2015), y(2022)), (y(2026), None)]
    assert [i["valid_from_precision"] for i in maria["intervals"]] == ["year", "year"]


def test_current_answer_shows_the_holder_with_both_terms(springfield, client):
    assert triplet_texts(client, springfield, "Who is the mayor of Springfield?") == [
        "Maria Lopez mayor of Springfield (2015\u20132022; again since 2026)"]


@pytest.mark.parametrize("as_of, holder", [
    ("2014-12-31T00:00:00Z", None),  # before any assertion: nothing
    ("2018-06-01T00:00:00Z", "Maria Lopez"),
    ("2021-12-31T23:59:59Z", "Maria Lopez"),
    ("2022-01-01T00:00:00Z", "Tom Reed"),  # exactly at the boundary: the successor
    ("2025-12-31T23:59:59Z", "Tom Reed"),
    ("2026-01-01T00:00:00Z", "Maria Lopez"),
])
def test_as_of_returns_the_holder_at_that_time(springfield, client, as_of, holder):
    texts = triplet_texts(client, springfield, "Who is the mayor of Springfield?", as_of=as_of)
    assert [t.split(" mayor of")[0] for t in texts] == ([holder] if holder else []), texts


def test_history_returns_every_term_marked(springfield, client):
    result = recall(client, springfield, "Who is the mayor of Springfield?", "TRIPLET_COMPLETION",
                    include_history=True)
    items = {i.text.split(" mayor of")[0]: i for i in result.items if i.kind == "triplet"}
    assert set(items) == {"Maria Lopez", "Tom Reed"}
    assert items["Tom Reed"].superseded and items["Tom Reed"].text.endswith("(2022\u20132026)")
    assert not items["Maria Lopez"].superseded


@pytest.mark.parametrize("search_type", EVERY_LANE)
def test_who_is_the_mayor_now_puts_the_current_holder_first_in_every_lane(springfield, client, search_type):
    result = recall(client, springfield, NOW_QUESTION, search_type)
    items = context(result)
    assert items, result
    assert "Maria Lopez" in items[0].text and not items[0].superseded, [i.text for i in items]
    assert "Tom Reed" not in items[0].text
    for item in items:
        if item.kind in ("chunk", "summary") and ("2015" in item.text or "Tom Reed" in item.text):
            # The chunks whose "is mayor" has since been replaced: flagged, with what replaced them.
            assert item.superseded, item
            [stale] = item.superseded_facts
            expected = "Tom Reed" if "2015" in item.text else "Maria Lopez"
            assert stale["by"].startswith(f"{expected} mayor of Springfield"), stale


def test_history_flags_passages_without_reordering_them(springfield, client):
    plain = context(recall(client, springfield, NOW_QUESTION, "CHUNKS", include_history=True))
    flagged = {i.text: i.superseded for i in plain}
    assert flagged == {ELECTED: True, TOOK_OVER: True, RE_ELECTED: False}


def test_as_of_applies_to_passages(springfield, client):
    items = context(recall(client, springfield, NOW_QUESTION, "CHUNKS", as_of="2023-06-01T00:00:00Z"))
    assert items[0].text == TOOK_OVER and not items[0].superseded
    assert next(i for i in items if i.text == ELECTED).superseded


def test_temporal_reads_the_period_the_question_names(springfield, client):
    result = recall(client, springfield, "Who was mayor of Springfield in 2023?", "TEMPORAL")
    facts_ = [i.text for i in result.items if i.kind == "triplet"]
    assert facts_ == ["Tom Reed mayor of Springfield (2022\u20132026)"], facts_


def test_rerunning_supersession_writes_nothing(springfield, client, store):
    before = whole_dataset_rows(store, springfield)
    for _ in range(2):
        accepted = client.call("engram.maintenance.supersede", dataset=springfield, functional_relationships=MAYOR)
        done = RunHandle(client, accepted["run_id"]).wait(timeout=120)
        assert done.status == "completed" and done.stages[0].status == "completed"
        assert whole_dataset_rows(store, springfield) == before


def test_ingest_order_does_not_change_the_outcome(client, store):
    outcomes, firsts = set(), set()
    for order in itertools.permutations([ELECTED, TOOK_OVER, RE_ELECTED]):
        name = _name("order")
        remember_in_order(client, name, order, MAYOR)
        outcomes.add(repr(outcome(store, name, "mayor_of")))
        firsts.add(context(recall(client, name, NOW_QUESTION, None))[0].text)
    assert len(outcomes) == 1, outcomes
    assert firsts == {RE_ELECTED}


# ------------------------------------------------------------------ how people write about time


def test_an_explicit_past_interval_arriving_later_stays_history(client, store):
    name = _name("shelbyville")
    remember_in_order(client, name, ["Tom Reed took over as mayor of Shelbyville in 2022.",
                                     "Maria Lopez was mayor of Shelbyville from 2015 to 2022."], MAYOR)
    mayors = facts(store, name, "mayor_of")
    assert mayors["Tom Reed"]["superseded"] is False and mayors["Tom Reed"]["valid_to"] is None
    assert mayors["Maria Lopez"]["valid_to"] == y(2022)
    assert triplet_texts(client, name, "Who is the mayor of Shelbyville?") == [
        "Tom Reed mayor of Shelbyville (since 2022)"]
    assert triplet_texts(client, name, "Who is the mayor of Shelbyville?", as_of="2018-01-01T00:00:00Z") == [
        "Maria Lopez mayor of Shelbyville (2015\u20132022)"]


def test_open_interval_and_former_ceo(client, store):
    name = _name("acme")
    remember_in_order(client, name, ["Bob Jones has been CEO of Acme since 2022.",
                                     "Alice Smith is the former CEO of Acme."], {"ceo_of": "target"})
    ceos = facts(store, name, "ceo_of")
    assert ceos["Bob Jones"]["superseded"] is False and ceos["Bob Jones"]["valid_to"] is None
    assert ceos["Alice Smith"]["superseded"] is True and ceos["Alice Smith"]["superseded_by_source"] == "Bob Jones"
    assert triplet_texts(client, name, "Who is the CEO of Acme?") == ["Bob Jones ceo of Acme (since 2022)"]
    history = triplet_texts(client, name, "Who is the CEO of Acme?", include_history=True)
    assert sorted(history) == ["Alice Smith ceo of Acme (formerly)", "Bob Jones ceo of Acme (since 2022)"]


def test_month_and_day_precision_order_within_one_year(client, store):
    name = _name("globex")
    remember_in_order(client, name, ["Dan Wu became CEO of Globex on 10 March 2024.",
                                     "Erin Cho became CEO of Globex in 2024.",
                                     "Carol King became CEO of Globex in March 2024."], {"ceo_of": "target"})
    ceos = facts(store, name, "ceo_of")
    assert [k for k, e in ceos.items() if not e["superseded"]] == ["Dan Wu"]
    assert ceos["Erin Cho"]["superseded_by_source"] == "Carol King" and ceos["Erin Cho"]["valid_to"] == y(2024, 3)
    assert ceos["Carol King"]["valid_to"] == y(2024, 3, 10)
    assert triplet_texts(client, name, "Who is the CEO of Globex?") == ["Dan Wu ceo of Globex (since 10 March 2024)"]


def test_years_before_1900(client, store):
    name = _name("presidents")
    remember_in_order(client, name, ["Andrew Johnson became president of the United States in 1865.",
                                     "Abraham Lincoln was president of the United States from 1861 to 1865."],
                      {"president_of": "target"})
    question = "Who was president of the United States?"
    assert triplet_texts(client, name, question, as_of="1863-01-01T00:00:00Z") == [
        "Abraham Lincoln president of United States (1861\u20131865)"]
    assert triplet_texts(client, name, question, as_of="1866-01-01T00:00:00Z") == [
        "Andrew Johnson president of United States (since 1865)"]
    assert facts(store, name, "president_of")["Abraham Lincoln"]["valid_to"] == y(1865)


def test_two_functional_relationships_on_different_ends(client, store):
    name = _name("zoe")
    remember_in_order(client, name, ["Zoe Park has lived in Rome since 2023.",
                                     "Zoe Park has lived in Paris since 2010.",
                                     "Zoe Park became CEO of Initech in 2019.",
                                     "Sam Ortiz became CEO of Initech in 2024."],
                      {"lived_in": "source", "ceo_of": "target"})
    with store.unit_of_work() as uow:
        rows = uow.conn.execute(text(
            "SELECT t.display_name, g.superseded FROM edges g JOIN datasets d ON d.id = g.dataset_id"
            " JOIN entities t ON t.id = g.target_id WHERE d.name = :d AND g.relationship = 'lived_in'"),
            {"d": name}).all()
    assert dict(rows) == {"Paris": True, "Rome": False}
    ceos = facts(store, name, "ceo_of")
    assert ceos["Zoe Park"]["superseded"] is True and ceos["Sam Ortiz"]["superseded"] is False
