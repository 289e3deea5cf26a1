"""Conversations end to end (real Postgres, real worker): 20 sessions remembered, and per stored
chunk its session date, its speakers, whole turns without the header, and the absolute dates
of the relative phrases it contains; facts, recall provenance and session entries dated too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from engram.tasks.client import EngramError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "producer-api.md"
FIRST = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday; the sessions are a week apart
EVENTS = ["pottery class", "farmers market", "book club", "climbing gym", "jazz concert", "science museum",
          "beach cleanup", "LGBTQ support group", "art gallery", "yoga retreat", "chess tournament",
          "food festival", "film screening", "poetry reading", "dance workshop", "charity auction",
          "cooking class", "photography walk", "music school", "garden show"]
PLAIN = 19  # this session is sent as a plain transcript under a "Session N, date" header


def _filler(session: int, turn: int) -> str:
    return (f"We talked about gardens, music and books for a long while in round {turn} of meeting {session}, "
            f"and the tea was good and the afternoon stayed calm and bright outside the open window.")


def _next_month(day: date) -> tuple[date, date]:
    first = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
    after = date(first.year + (first.month == 12), first.month % 12 + 1, 1)
    return first, after - timedelta(days=1)


def _session(i: int) -> tuple[datetime, list[dict], dict[str, tuple[date, date]]]:
    """Session i's start, turns and, per planted phrase line, the days it means (by hand: the
    start is a Monday, so yesterday is Sunday, last Saturday two days back)."""
    start = FIRST + timedelta(weeks=i)
    d = start.date()
    speakers = ["Caroline", "Melanie"] + (["Jon"] if i % 4 == 0 else [])
    turns = [{"speaker": speakers[t % len(speakers)], "text": _filler(i, t)} for t in range(10)]
    planted = {
        0: (f"I went to the {EVENTS[i]} yesterday and it was so powerful.", "yesterday", (d - timedelta(1),) * 2),
        3: ("We went camping two weekends ago by the lake.", "two weekends ago", (d - timedelta(9), d - timedelta(8))),
        6: ("Last Saturday I painted a sunrise over the lake.", "Last Saturday", (d - timedelta(2),) * 2),
        9: ("I am moving to a new flat next month, finally.", "next month", _next_month(d)),
    }
    expected = {}
    for t, (sentence, phrase, days) in planted.items():
        turns[t]["text"] = f"{sentence} {turns[t]['text']}"
        expected[phrase] = days
    if i == 5:  # a turn with its own time: Wednesday, so its "yesterday" is the Tuesday
        turns[1]["text"] = f"I baked bread yesterday. {turns[1]['text']}"
        turns[1]["at"] = (start + timedelta(days=2)).isoformat()
        expected["yesterday@2"] = (d + timedelta(1),) * 2
    return start, turns, expected


def _items() -> list[dict]:
    items = []
    for i in range(20):
        start, turns, _ = _session(i)
        if i == PLAIN:
            header = f"Session {i + 1}, {start.day} {start:%B %Y}, 1:56 pm"
            items.append({"name": f"session-{i}", "text": header + "\n" + "\n".join(
                f"{t['speaker']}: {t['text']}" for t in turns)})
        else:
            items.append({"name": f"session-{i}", "turns": turns, "started_at": start.isoformat()})
    return items


def _stored_chunks(store, dataset_name: str) -> list[dict]:
    with store.unit_of_work() as uow:
        return [dict(r) for r in uow.conn.execute(text(
            "SELECT c.id, c.chunk_index, c.text, c.occurred_at, c.speakers, c.dates, c.conversation, d.doc_type,"
            " d.title, i.name, i.content FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN data_items i ON i.id = d.data_item_id"
            " WHERE c.dataset_id = (SELECT id FROM datasets WHERE name = :n) ORDER BY i.name, c.chunk_index"),
            {"n": dataset_name}).mappings()]


@pytest.fixture(scope="module")
def remembered(worker, services):
    from engram.adapters.store import Store

    name = "conversations-20"
    statuses = worker.client.remember(dataset=name, items=_items(), background=False, timeout=900)
    assert [s.status for s in statuses] == ["completed"] * 20, [s.error for s in statuses]
    return worker.client, Store(), name


def test_every_chunk_of_20_sessions_carries_its_session_date_speakers_and_resolved_dates(remembered):
    _, store, name = remembered
    rows = _stored_chunks(store, name)
    assert len(rows) > 20  # the sessions are longer than one chunk
    for i in range(20):
        start, turns, expected = _session(i)
        chunks = [r for r in rows if r["name"] == f"session-{i}"]
        lines = [f"{t['speaker']}: {t['text']}" for t in turns]
        assert [line for c in chunks for line in c["text"].splitlines()] == lines  # whole turns, in order, once
        found = {}
        for c in chunks:
            assert c["doc_type"] == "conversation" and c["occurred_at"] == start
            assert "Session" not in c["text"] and "2023" not in c["text"]  # the header is no chunk's text
            said = [line.split(": ", 1)[0] for line in c["text"].splitlines()]
            assert c["speakers"] == list(dict.fromkeys(said))
            assert c["conversation"]["participants"] == list(dict.fromkeys(t["speaker"] for t in turns))
            for ref in c["dates"]:
                key = ref["phrase"] + ("@2" if ref["turn"] == "2" and i == 5 else "")
                found[key] = (date.fromisoformat(ref["start"]), date.fromisoformat(ref["end"]))
                assert ref["phrase"] in c["text"]
        assert found == expected, i
        assert chunks[0]["title"] == f"session-{i}"


def test_a_fact_said_with_yesterday_is_valid_from_that_date_and_recall_shows_the_session(remembered):
    client, store, name = remembered
    start, _, expected = _session(7)
    with store.unit_of_work() as uow:
        rows = uow.conn.execute(text(
            "SELECT g.edge_text, i.valid_from, i.asserted_at FROM edge_intervals i JOIN edges g ON g.id = i.edge_id"
            " WHERE i.dataset_id = (SELECT id FROM datasets WHERE name = :n) AND g.edge_text ILIKE '%support group%'"),
            {"n": name}).mappings().all()
    assert rows
    sunday = datetime.combine(expected["yesterday"][0], datetime.min.time(), UTC)
    assert {r["valid_from"] for r in rows} == {sunday}, rows
    assert all(r["asserted_at"] >= sunday for r in rows)

    result = client.recall("When did Caroline go to the LGBTQ support group?", datasets=[name],
                           search_type="CHUNKS", top_k=3)
    top = next(item for item in result.items if "support group" in item.text)
    assert top.provenance.occurred_at == start
    assert top.provenance.speakers[0] == "Caroline"


def _windows(store, dataset_name: str) -> list[dict]:
    with store.unit_of_work() as uow:
        return [dict(r) for r in uow.conn.execute(text(
            "SELECT w.chunk_id, w.width, w.start, w.embedding IS NOT NULL AS embedded FROM chunk_windows w"
            " WHERE w.dataset_id = (SELECT id FROM datasets WHERE name = :n)"), {"n": dataset_name}).mappings()]


def test_every_conversation_chunk_has_its_2_and_3_turn_windows_embedded(remembered):
    _, store, name = remembered
    windows = _windows(store, name)
    assert windows and all(w["embedded"] for w in windows)
    for chunk in _stored_chunks(store, name):
        turns = len(chunk["text"].splitlines())
        mine = sorted((w["width"], w["start"]) for w in windows if w["chunk_id"] == chunk["id"])
        expected = [] if turns < 2 else sorted((width, s) for width in (2, 3) for s in range(max(1, turns - width + 1)))
        assert mine == expected, chunk["text"]


def test_the_dense_lane_scores_a_conversation_chunk_by_its_best_windows(remembered):
    """The exchange about the support group is 1 turn of its chunk's ~5: the chunk's own vector
    is far from the question, its best windows near; the lane ranks by the windows."""
    client, store, name = remembered
    question = "When did Caroline go to the LGBTQ support group?"
    result = client.recall(question, datasets=[name], search_type="CHUNKS", top_k=3)
    assert "LGBTQ support group" in result.items[0].text
    from engram.adapters.embed import LocalEmbedder

    vector = LocalEmbedder().embed([question])[0]
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, "default")
        (top, *_) = uow.search.chunks_by_vector([dataset], vector, 3)
        own = uow.conn.execute(text("SELECT embedding <=> CAST(:v AS vector) FROM chunks WHERE id = :c"),
                               {"v": str(vector), "c": top["id"]}).scalar_one()
        best = uow.conn.execute(text(
            "SELECT avg(d) FROM (SELECT min(embedding <=> CAST(:v AS vector)) AS d FROM chunk_windows"
            " WHERE chunk_id = :c GROUP BY width) x"), {"v": str(vector), "c": top["id"]}).scalar_one()
        exact = uow.search.chunk_scores([dataset], [top["id"]], vector, {})
    assert top["distance"] == pytest.approx(best) and best < own - 0.05
    assert exact[top["id"]][0] == pytest.approx(best)  # score fusion's exact scores agree


def test_forgetting_a_session_drops_its_windows(client, store, dataset_name):
    start, turns, _ = _session(3)
    (status,) = client.remember(dataset=dataset_name, items=[{"name": "s3", "turns": turns,
                                                               "started_at": start.isoformat()}], background=False)
    assert status.status == "completed" and _windows(store, dataset_name)
    client.forget(dataset_name, data_item_id=status.data_item_id)
    assert _windows(store, dataset_name) == []


def test_the_store_finds_conversation_chunks_by_a_day_said_or_meant(remembered):
    _, store, name = remembered
    day = _session(7)[2]["yesterday"][0]
    rows = _stored_chunks(store, name)
    meant = {r["id"] for r in rows if r["occurred_at"].date() == day
             or any(date.fromisoformat(d["start"]) <= day <= date.fromisoformat(d["end"]) for d in r["dates"])}
    assert len(meant) >= 2  # session 7's "yesterday" and session 8's "two weekends ago"
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, "default")
        vector = uow.conn.execute(text("SELECT embedding::text FROM chunks WHERE dataset_id = :d LIMIT 1"),
                                  {"d": dataset}).scalar_one()
        hits = uow.search.chunks_in_dates([dataset], json.loads(vector), day, day, limit=100)
    assert {h["id"] for h in hits} == meant


def test_other_documents_have_no_conversation_data(client, store, dataset_name):
    client.remember("Alice Moreau is the CEO of Harbor Dynamics since 2019. It is in Port Alder.",
                    dataset=dataset_name, background=False)
    (row,) = _stored_chunks(store, dataset_name)
    assert (row["doc_type"], row["occurred_at"], row["speakers"], row["dates"], row["conversation"]) == (
        "text", None, None, None, None)
    assert _windows(store, dataset_name) == []  # prose has no turn windows


def test_a_bad_conversation_is_refused_by_turn_and_writes_nothing(client, store, dataset_name):
    with store.unit_of_work() as uow:
        before = uow.conn.execute(text("SELECT count(*) FROM data_items")).scalar_one()
    items = [{"turns": [{"speaker": "Ann", "text": "hi"}], "started_at": "2023-05-08"},
             {"name": "bad", "turns": [{"speaker": "Ann", "text": "hi"}, {"speaker": "Q: A", "text": "x"}]}]
    with pytest.raises(EngramError, match=r"item 1 \(bad\): turn 1: speaker 'Q: A' is not a name"):
        client.remember(dataset=dataset_name, items=items)
    with store.unit_of_work() as uow:
        assert uow.conn.execute(text("SELECT count(*) FROM data_items")).scalar_one() == before


def test_a_session_entry_keeps_its_time_and_the_dates_of_its_phrases(client, store, dataset_name):
    stored = client.remember_turn(dataset=dataset_name, session_id="s1", question="Where did I go yesterday?",
                                  answer="You went to the support group last Saturday.", at="2023-05-08T13:56:00Z")
    with store.unit_of_work() as uow:
        row = uow.conn.execute(text("SELECT occurred_at, dates FROM session_entries WHERE id = :i"),
                               {"i": stored.entry_id}).mappings().one()
    assert row["occurred_at"] == FIRST
    assert row["dates"] == [
        {"phrase": "yesterday", "start": "2023-05-07", "end": "2023-05-07", "part": "question"},
        {"phrase": "last Saturday", "start": "2023-05-06", "end": "2023-05-06", "part": "answer"},
    ]


def test_the_documented_conversation_snippet_runs_verbatim(worker, tmp_path):
    section = DOCS.read_text().split("\n## Conversations", 1)[1].split("\n## ", 1)[0]
    snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    env = {"PATH": "/usr/bin:/bin", "ENGRAM_REDIS_URL": worker.redis_url}  # a bare producer: Celery only
    done = subprocess.run([sys.executable, "-I", "-c", snippet], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "completed 2023-05-08T13:56:00Z ['Caroline', 'Melanie']"
