"""A rejected `remember` writes nothing: hypothesis sends nasty payloads to the real task (the
shared worker, through the broker, as any producer would) and every table's row count stays as
it was; the error names the problem (never a driver error, an SQL statement or a traceback)."""

from __future__ import annotations

import base64
import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from engram.tasks.client import EngramError

GOOD = ["Ilvermorne Quarry is located in Tessel.", "Person7 Halvorsen works at Lantern Labs.",
        "Lantern Labs founded Project Ardent in 1961."]

# One poison each: (what it is, strategy of a bad item or of a payload change, what the error says).
# Filler around a poison carries no poison of its own (no NUL, no lone surrogate).
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
POISON_ITEMS = {
    "NUL in text": (st.builds(lambda a, b: {"text": f"{a}x\x00{b}"}, TEXT, TEXT), "NUL"),
    "NUL in name": (st.builds(lambda a: {"text": "fine text", "name": f"{a}\x00.txt"}, TEXT), "NUL"),
    "NUL in source": (st.builds(lambda a: {"text": "fine text", "source": f"s3://{a}\x00"}, TEXT), "NUL"),
    "lone surrogate in text": (st.builds(lambda a: {"text": f"{a}\ud800 tail"}, TEXT), "unicode"),
    "lone surrogate in name": (st.builds(lambda a: {"text": "fine text", "name": f"{a}\udfff"}, TEXT), "unicode"),
    "blank text": (st.sampled_from(["", " ", "\n\t  \r\n", "\u00a0\u2003"]).map(lambda t: {"text": t}), "item"),
    "bad base64": (st.text(alphabet="ab!*#=-_ .", min_size=1, max_size=20).filter(lambda t: not _b64ok(t)).map(
        lambda t: {"content_b64": t, "name": "f.txt"}), "base64"),
    "binary file": (st.binary(min_size=64, max_size=300).map(lambda b: {
        "content_b64": base64.b64encode(bytes(range(9)) * 8 + b).decode(), "name": "blob.bin"}), "item"),
    "not a PDF": (st.binary(max_size=200).map(lambda b: {
        "content_b64": base64.b64encode(b"NOPE" + b).decode(), "name": "x.pdf", "mime": "application/pdf"}), "item"),
    "invalid UTF-8": (st.binary(max_size=50).map(lambda b: {
        "content_b64": base64.b64encode(b"ok \xff\xfe " + b).decode(), "name": "menu.txt"}), "item"),
    "text and file": (st.just({"text": "two", "content_b64": base64.b64encode(b"contents").decode()}), "exactly one"),
    "neither text nor file": (st.just({"name": "empty.txt"}), "exactly one"),
    "unknown item field": (st.builds(lambda k: {"text": "fine", f"x_{k}": 1}, st.text(
        alphabet="abcdefgh", min_size=1, max_size=8)), "extra"),
    "item not an object": (st.one_of(st.integers(), TEXT, st.lists(st.integers(), max_size=2)), "items"),
    "name too long": (st.integers(501, 600).map(lambda n: {"text": "fine", "name": "n" * n}), "name"),
}
POISON_FIELDS = {
    "bad dataset name": (st.sampled_from(["", "-lead", "a/b", "x" * 201, "sp\x00ce", "naïve", "a;DROP TABLE users"])
                         .map(lambda n: {"dataset": n}), "dataset"),
    "bad user": (st.sampled_from(["", "/root", "bob\x00"]).map(lambda u: {"user": u}), "user"),
    "importance out of range": (st.one_of(st.floats(max_value=-0.01), st.floats(min_value=1.01), st.just("high"))
                                .map(lambda v: {"importance": v}), "importance"),
    "NUL in a node set": (st.builds(lambda a: {"node_sets": ["ok", f"{a}\x00"]}, TEXT), "NUL"),
    "bad cognify option": (st.sampled_from([{"functional_relationships": {"ceo_of": "sideways"}},
                                            {"contradiction_check": "maybe"}, {"bogus": True}])
                           .map(lambda o: {"options": o}), "options"),
    "unknown top-level field": (st.just({"dataset_id": "x"}), "extra"),
    "items not a list": (st.one_of(TEXT, st.integers(), st.dictionaries(TEXT, TEXT, max_size=2))
                         .map(lambda v: {"items": v}), "items"),
    "session turn with items": (st.just({"session_id": "s1", "question": "why?"}), "session turn"),
    "too many items": (st.just({"items": [{"text": f"doc {i}"} for i in range(1001)]}), "items"),
}


def _b64ok(value: str) -> bool:
    import binascii

    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def row_counts(store) -> dict[str, int]:
    """Rows of every table of the schema, in one statement."""
    with store.unit_of_work() as uow:
        tables = uow.conn.execute(text(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
            " ORDER BY tablename")).scalars().all()
        counts = uow.conn.execute(text(" UNION ALL ".join(
            f"SELECT '{t}', count(*) FROM \"{t}\"" for t in tables))).all()  # noqa: S608 - names from the catalogue
    return dict(counts)


def _quiet(store, timeout: float = 300) -> None:
    """No open run anywhere: what earlier tests started has finished writing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with store.unit_of_work() as uow:
            open_runs = uow.conn.execute(text(
                "SELECT count(*) FROM pipeline_runs WHERE status IN ('pending', 'running')")).scalar_one()
        if not open_runs:
            return
        time.sleep(1)


@pytest.fixture(scope="module")
def quiet_worker(worker, services):
    from engram.adapters.store import Store

    _quiet(Store())
    return worker


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_rejected_remember_writes_nothing_and_says_why(quiet_worker, store, data):
    kind = data.draw(st.sampled_from(sorted(POISON_ITEMS) + sorted(POISON_FIELDS)), label="poison")
    good = data.draw(st.lists(st.sampled_from(GOOD), max_size=3, unique=True), label="good items")
    payload = {"dataset": f"fz-{uuid.uuid4().hex[:10]}", "user": f"fz{uuid.uuid4().hex[:6]}",
               "create_dataset": True, "items": [{"text": f"{t} ({uuid.uuid4().hex[:6]})"} for t in good]}
    if kind in POISON_ITEMS:
        strategy, expected = POISON_ITEMS[kind]
        at = data.draw(st.integers(0, len(good)), label="position")
        payload["items"].insert(at, data.draw(strategy, label="bad item"))
    else:
        strategy, expected = POISON_FIELDS[kind]
        payload.update(data.draw(strategy, label="change"))
        if kind == "session turn with items" and not payload["items"]:
            payload["items"] = [{"text": "fine"}]
    before = row_counts(store)
    with pytest.raises(EngramError) as caught:
        quiet_worker.client.call("engram.remember", **payload)
    message = str(caught.value)
    assert row_counts(store) == before, (kind, message)  # nothing written, not even the dataset or user
    assert expected.lower() in message.lower(), (kind, message)
    for driver_talk in ("Traceback", "[SQL:", "psycopg", "sqlalchemy", "DataError"):
        assert driver_talk not in message, (kind, message)
    assert len(message) < 3000, (kind, len(message))
