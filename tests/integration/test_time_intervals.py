"""An end stated alone closes the open interval of its edge, a later start reopens it, and
relationships not declared functional keep every stated end (issue 36 item 4), end to end with
the offline extractor and a real worker. The same with the model's valid_to: test_time_llm.py.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from time_helpers import context, facts, recall, remember_in_order, triplet_texts

SIGNED = "Vestria became a signatory of the Kessel Accord in 2008."
NORLAND = "Norland became a signatory of the Kessel Accord in 2008."
WITHDREW = "Vestria withdrew as a signatory of the Kessel Accord in 2017."
REJOINED = "Vestria became a signatory of the Kessel Accord again in 2020."
TREATY = ["signatory_of"]  # one accord per signatory: the end that is single-valued is the source
CEO_SINCE = "Ana Ruiz has been CEO of Corvex since 2010."
RESIGNED = "Ana Ruiz resigned as CEO of Corvex in 2017."
ACME = "Ken Bell worked at Acme from 2010 to 2018."
GLOBEX = "Ken Bell has worked at Globex since 2015."
NOTHING_FUNCTIONAL = {"mayor_of": "target"}  # the pass runs, but judges none of these relationships


def y(year, month=1, day=1):
    return datetime(year, month, day, tzinfo=UTC)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _spans(edge: dict) -> list[tuple]:
    return [(i["starts_at"], i["ends_at"]) for i in edge["intervals"]]


def _signatories(client, dataset: str, **kw) -> list[str]:
    return sorted(t.split(" signatory of")[0] for t in
                  triplet_texts(client, dataset, "Which countries are signatories of the Kessel Accord?", **kw))


@pytest.fixture(scope="module")
def treaty(worker):
    """Signed 2008, withdrew 2017 (no successor), signed again 2020; Norland signed in 2008."""
    name = _name("kessel")
    remember_in_order(worker.client, name, [NORLAND + " " + SIGNED, WITHDREW], TREATY)
    return name


def test_a_withdrawal_closes_the_signature_at_its_year(treaty, store, client):
    edges = facts(store, treaty, "signatory_of")
    vestria = edges["Vestria"]
    assert (vestria["superseded"], vestria["valid_from"], vestria["valid_to"]) == (False, y(2008), y(2017))
    assert _spans(vestria) == [(y(2008), y(2017)), (y(2008), y(2017))]  # the statement and the end it closed
    assert edges["Norland"]["valid_to"] is None
    assert _signatories(client, treaty) == ["Norland"]
    assert _signatories(client, treaty, as_of="2010-06-01T00:00:00Z") == ["Norland", "Vestria"]
    assert _signatories(client, treaty, as_of="2019-06-01T00:00:00Z") == ["Norland"]


def test_signing_again_reopens_it_a_b_a(treaty, store, client):
    rejoined = _name("kessel-again")
    remember_in_order(client, rejoined, [REJOINED, WITHDREW, NORLAND + " " + SIGNED], TREATY)  # any order
    vestria = facts(store, rejoined, "signatory_of")["Vestria"]
    assert (vestria["superseded"], vestria["valid_from"], vestria["valid_to"]) == (False, y(2008), None)
    assert _spans(vestria) == [(y(2008), y(2017)), (y(2008), y(2017)), (y(2020), None)]
    for as_of, expected in (("2010-06-01", ["Norland", "Vestria"]), ("2019-06-01", ["Norland"]),
                            ("2021-06-01", ["Norland", "Vestria"])):
        assert _signatories(client, rejoined, as_of=f"{as_of}T00:00:00Z") == expected, as_of
    assert "Vestria signatory of Kessel Accord (2008\u20132017; again since 2020)" in triplet_texts(
        client, rejoined, "Which countries are signatories of the Kessel Accord?")
    # The 2008 passage states as ongoing what has since ended: flagged, with when it ended.
    items = context(recall(client, rejoined, "Is Vestria a signatory of the Kessel Accord?", "CHUNKS"))
    signed = next(i for i in items if SIGNED in i.text)
    assert signed.superseded and any(f["until"] == "2017" and f["by"] is None for f in signed.superseded_facts)
    assert items[0].text == REJOINED


@pytest.mark.parametrize("functional", [{"ceo_of": "target"}, NOTHING_FUNCTIONAL])
def test_a_resignation_without_a_successor_ends_the_term(client, store, functional):
    name = _name("corvex")
    remember_in_order(client, name, [CEO_SINCE, RESIGNED], functional)
    ana = facts(store, name, "ceo_of")["Ana Ruiz"]
    assert ana["superseded"] is False and ana["superseded_by"] is None
    assert _spans(ana) == [(y(2010), y(2017)), (y(2010), y(2017))]
    question = "Who is the CEO of Corvex?"
    assert [t.split(" ceo of")[0] for t in triplet_texts(client, name, question, as_of="2015-06-01T00:00:00Z")] == [
        "Ana Ruiz"]
    assert triplet_texts(client, name, question, as_of="2018-06-01T00:00:00Z") == []
    if "ceo_of" in functional:  # judged: the edge itself is history
        assert ana["valid_to"] == y(2017)
        assert triplet_texts(client, name, question) == []
        assert triplet_texts(client, name, question, include_history=True) == [
            "Ana Ruiz ceo of Corvex (2010\u20132017)"]


def test_overlapping_employers_keep_both_stated_ends(client, store):
    name = _name("ken")
    remember_in_order(client, name, [ACME, GLOBEX], NOTHING_FUNCTIONAL)
    employers = _employers(store, name)
    assert employers == {"Acme": [(y(2010), y(2018))], "Globex": [(y(2015), None)]}
    question = "Where did Ken Bell work?"
    for as_of, expected in (("2012-06-01", ["Acme"]), ("2016-06-01", ["Acme", "Globex"]), ("2019-06-01", ["Globex"])):
        texts = triplet_texts(client, name, question, as_of=f"{as_of}T00:00:00Z")
        assert sorted(t.split("worked at ")[1] for t in texts if "worked at" in t) == expected, (as_of, texts)


def _employers(store, dataset: str) -> dict[str, list[tuple]]:
    """Spans of the worked_at edges by employer (time_helpers.facts keys by the one source)."""
    with store.unit_of_work() as uow:
        rows = uow.conn.execute(text(
            "SELECT t.display_name AS target, i.starts_at, i.ends_at FROM edge_intervals i"
            " JOIN edges g ON g.id = i.edge_id JOIN datasets d ON d.id = g.dataset_id"
            " JOIN entities t ON t.id = g.target_id WHERE d.name = :d AND g.relationship = 'worked_at'"
            " ORDER BY t.display_name, i.starts_at"), {"d": dataset}).mappings().all()
    out: dict[str, list[tuple]] = {}
    for r in rows:
        out.setdefault(r["target"], []).append((r["starts_at"], r["ends_at"]))
    return out


def test_forgetting_the_resignation_reopens_the_term(client, store):
    name = _name("corvex-forget")
    remember_in_order(client, name, [CEO_SINCE], NOTHING_FUNCTIONAL)
    [resigned] = client.remember(RESIGNED, dataset=name, background=False, timeout=300,
                                 options={"functional_relationships": NOTHING_FUNCTIONAL})
    assert _spans(facts(store, name, "ceo_of")["Ana Ruiz"]) == [(y(2010), y(2017))] * 2
    client.forget(name, data_item_id=resigned.data_item_id)
    assert _spans(facts(store, name, "ceo_of")["Ana Ruiz"]) == [(y(2010), None)]
    texts = triplet_texts(client, name, "Who is the CEO of Corvex?", as_of="2018-06-01T00:00:00Z")
    assert [t.split(" ceo of")[0] for t in texts] == ["Ana Ruiz"]
