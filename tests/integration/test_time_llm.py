"""Time-aware facts with replayed LLM extraction: the model's valid_from / valid_to per edge
(issue 15). The documents word their dates so that only the model's fields give the right
interval (relative dates, "took office"), or say none at all ("former").
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
from time_helpers import EVERY_LANE, MAYOR, context, facts, recall, remember_in_order, triplet_texts

WON = "Maria Lopez won the Ogdenville mayoral race two years after the 2013 flood."
TOOK_OFFICE = "Tom Reed took office as mayor of Ogdenville after the 2021 count."
RE_ELECTED = "Maria Lopez was re-elected mayor of Ogdenville in 2026."
QUIMBY_PAST = "Joe Quimby ran North Haverbrook for nine years before the 1880 fire."
ADA = "Ada Quimby has led North Haverbrook since the 1880 fire."
VERA = "Vera Lind, once at the helm of Hooli, spoke today."
IVY = "Ivy Moss took charge of Hooli in January 2024."
GUS = "Gus Hale has run Hooli since March 2024."
NIA_HOME = "Nia Cole left Oslo for Lima in 2019."
NIA_CEO = "Nia Cole started at Vandelay as chief executive in 2020; Omar Fry replaced her in 2023."
# Issue 36: the model states the revocation as an end alone (valid_to, no valid_from).
SIGNED = "Norland and Vestria signed the Kessel Accord in 2008."
REVOKED = "Vestria revoked its signature of the Kessel Accord in 2017."
REJOINED = "Vestria rejoined the Kessel Accord in 2020."
MARKED = ('SUPERSEDED: states "Maria Lopez mayor of Ogdenville (since 2015)", '
          'replaced by "Tom Reed mayor of Ogdenville (since 2022)"')


def _extraction(doc: str, edges: list[tuple]) -> dict:
    """A ChunkExtraction entry: edges (source, rel, target, description, valid_from, valid_to)."""
    names = list(dict.fromkeys(n for s, _, t, *_ in edges for n in (s, t)))
    ids = {n: f"n{i}" for i, n in enumerate(names, 1)}
    return {"contains": doc, "response_model": "ChunkExtraction", "response": {
        "graph": {"nodes": [{"id": ids[n], "name": n, "type": "entity", "description": ""} for n in names],
                  "edges": [{"source_node_id": ids[s], "target_node_id": ids[t], "relationship_name": r,
                             "description": d, "valid_from": f, "valid_to": to} for s, r, t, d, f, to in edges]},
        "summary": {"summary": doc, "description": ""}}}


ENTRIES = [
    _extraction(WON, [("Maria Lopez", "mayor_of", "Ogdenville", "Maria Lopez won the mayoral race", "2015", None)]),
    _extraction(TOOK_OFFICE, [("Tom Reed", "mayor_of", "Ogdenville", "Tom Reed took office as mayor", "2022", None)]),
    _extraction(RE_ELECTED, [("Maria Lopez", "mayor_of", "Ogdenville", "Maria Lopez was re-elected", "2026", None)]),
    _extraction(QUIMBY_PAST, [("Joe Quimby", "mayor_of", "North Haverbrook", "Joe Quimby was mayor", "1871", "1880")]),
    _extraction(ADA, [("Ada Quimby", "mayor_of", "North Haverbrook", "Ada Quimby is mayor", "1880", None)]),
    _extraction(VERA, [("Vera Lind", "ceo_of", "Hooli", "Vera Lind is the former CEO of Hooli", None, None)]),
    _extraction(IVY, [("Ivy Moss", "ceo_of", "Hooli", "Ivy Moss became CEO of Hooli", "2024-01", None)]),
    _extraction(GUS, [("Gus Hale", "ceo_of", "Hooli", "Gus Hale is CEO of Hooli", "2024-03", None)]),
    _extraction(NIA_HOME, [("Nia Cole", "lives_in", "Oslo", "Nia Cole lived in Oslo", None, "2019"),
                           ("Nia Cole", "lives_in", "Lima", "Nia Cole lives in Lima", "2019", None)]),
    _extraction(NIA_CEO, [("Nia Cole", "ceo_of", "Vandelay", "Nia Cole became CEO of Vandelay", "2020", None),
                          ("Omar Fry", "ceo_of", "Vandelay", "Omar Fry became CEO of Vandelay", "2023", None)]),
    _extraction(SIGNED, [("Norland", "signatory_of", "Kessel Accord", "Norland signed the accord", "2008", None),
                         ("Vestria", "signatory_of", "Kessel Accord", "Vestria signed the accord", "2008", None)]),
    _extraction(REVOKED, [("Vestria", "signatory_of", "Kessel Accord", "Vestria revoked its signature", None, "2017")]),
    _extraction(REJOINED, [("Vestria", "signatory_of", "Kessel Accord", "Vestria rejoined the accord", "2020", None)]),
    {"contains": MARKED, "response_model": "text", "response": "Maria Lopez, again since 2026."},
    {"contains": "", "response_model": "text", "response": "(unmatched prompt)"},
]


def y(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture(scope="module")
def replay(spawn_worker, tmp_path_factory):
    cassette = tmp_path_factory.mktemp("time-llm") / "cassette.json"
    cassette.write_text(json.dumps({"version": 1, "entries": ENTRIES}))
    handle = spawn_worker({"ENGRAM_LLM_MODEL": f"replay:{cassette}"}, concurrency=2)
    yield handle
    handle.stop()


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def ogdenville(replay):
    name = _name("ogdenville")
    remember_in_order(replay.client, name, [WON, TOOK_OFFICE, RE_ELECTED], MAYOR)
    return name


def test_the_models_dates_drive_re_election(ogdenville, replay, store):
    mayors = facts(store, ogdenville, "mayor_of")
    # 2015 from the model, not the 2013 the sentence names; re-assertion kept both terms.
    assert [(i["starts_at"], i["ends_at"]) for i in mayors["Maria Lopez"]["intervals"]] == [
        (y(2015), y(2022)), (y(2026), None)]
    assert mayors["Tom Reed"]["superseded"] and mayors["Tom Reed"]["valid_to"] == y(2026)
    assert triplet_texts(replay.client, ogdenville, "Who is the mayor of Ogdenville?") == [
        "Maria Lopez mayor of Ogdenville (2015\u20132022; again since 2026)"]


@pytest.mark.parametrize("as_of, holder", [("2014-06-01T00:00:00Z", None), ("2021-12-31T23:59:59Z", "Maria Lopez"),
                                           ("2022-01-01T00:00:00Z", "Tom Reed")])
def test_as_of_before_any_assertion_and_at_the_boundary(ogdenville, replay, as_of, holder):
    texts = triplet_texts(replay.client, ogdenville, "Who is the mayor of Ogdenville?", as_of=as_of)
    assert [t.split(" mayor of")[0] for t in texts] == ([holder] if holder else [])


@pytest.mark.parametrize("search_type", EVERY_LANE)
def test_current_holder_first_in_every_lane(ogdenville, replay, search_type):
    items = context(recall(replay.client, ogdenville, "Who is the mayor of Ogdenville now?", search_type))
    assert "Maria Lopez" in items[0].text and not items[0].superseded, [i.text for i in items]
    won = [i for i in items if i.kind in ("chunk", "summary") and i.text == WON]
    assert all(i.superseded and i.superseded_facts[0]["by"].startswith("Tom Reed") for i in won)


def test_the_completion_prompt_marks_the_superseded_passage(ogdenville, replay):
    result = recall(replay.client, ogdenville, "Who is the mayor of Ogdenville now?", None)
    assert result.search_type == "HYBRID_COMPLETION" and result.generated
    # The cassette answers only a prompt carrying the mark, with what replaced the fact.
    assert result.items[0].kind == "answer" and result.items[0].text == "Maria Lopez, again since 2026."


def test_explicit_past_interval_before_1900_arriving_after_the_current_holder(replay, store):
    name = _name("haverbrook")
    remember_in_order(replay.client, name, [ADA, QUIMBY_PAST], MAYOR)
    mayors = facts(store, name, "mayor_of")
    assert not mayors["Ada Quimby"]["superseded"] and mayors["Joe Quimby"]["valid_to"] == y(1880)
    question = "Who is the mayor of North Haverbrook?"
    assert triplet_texts(replay.client, name, question) == ["Ada Quimby mayor of North Haverbrook (since 1880)"]
    assert triplet_texts(replay.client, name, question, as_of="1875-01-01T00:00:00Z") == [
        "Joe Quimby mayor of North Haverbrook (1871\u20131880)"]


def test_former_ceo_and_month_precision(replay, store):
    name = _name("hooli")
    remember_in_order(replay.client, name, [GUS, VERA, IVY], {"ceo_of": "target"})
    ceos = facts(store, name, "ceo_of")
    assert [k for k, e in ceos.items() if not e["superseded"]] == ["Gus Hale"]
    assert ceos["Ivy Moss"]["valid_to"] == y(2024, 3) and ceos["Ivy Moss"]["superseded_by_source"] == "Gus Hale"
    assert ceos["Vera Lind"]["intervals"][0]["ended"] is True
    assert triplet_texts(replay.client, name, "Who is the CEO of Hooli?") == ["Gus Hale ceo of Hooli (since March 2024)"]


def test_two_functional_relationships_on_different_ends(replay, store):
    name = _name("nia")
    remember_in_order(replay.client, name, [NIA_CEO, NIA_HOME], {"lives_in": "source", "ceo_of": "target"})
    ceos = facts(store, name, "ceo_of")
    assert ceos["Nia Cole"]["superseded_by_source"] == "Omar Fry" and not ceos["Omar Fry"]["superseded"]
    homes = triplet_texts(replay.client, name, "Where does Nia Cole live?")
    assert "Nia Cole lives in Lima (since 2019)" in homes and not any("Oslo" in t for t in homes)


def _signatories(client, dataset: str, **kw) -> list[str]:
    texts = triplet_texts(client, dataset, "Which countries are signatories of the Kessel Accord?", **kw)
    return sorted(t.split(" signatory of")[0] for t in texts)


def test_a_revocation_given_as_valid_to_ends_the_signature_and_a_rejoining_reopens_it(replay, store):
    name = _name("kessel")
    remember_in_order(replay.client, name, [SIGNED, REVOKED], ["signatory_of"])
    vestria = facts(store, name, "signatory_of")["Vestria"]
    # Not the empty [2017, 2017): the end closes the 2008 signature and spans it.
    assert [(i["starts_at"], i["ends_at"]) for i in vestria["intervals"]] == [(y(2008), y(2017))] * 2
    assert vestria["valid_to"] == y(2017) and not vestria["superseded"]
    assert _signatories(replay.client, name) == ["Norland"]
    assert _signatories(replay.client, name, as_of="2019-06-01T00:00:00Z") == ["Norland"]
    assert _signatories(replay.client, name, as_of="2010-06-01T00:00:00Z") == ["Norland", "Vestria"]

    remember_in_order(replay.client, name, [REJOINED], ["signatory_of"])
    assert _signatories(replay.client, name) == ["Norland", "Vestria"]
    assert _signatories(replay.client, name, as_of="2019-06-01T00:00:00Z") == ["Norland"]
    assert _signatories(replay.client, name, as_of="2021-06-01T00:00:00Z") == ["Norland", "Vestria"]
    assert "Vestria signatory of Kessel Accord (2008\u20132017; again since 2020)" in triplet_texts(
        replay.client, name, "Which countries are signatories of the Kessel Accord?")
