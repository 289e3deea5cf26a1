"""Conversations as input: the payload, the stored transcript, recognising one in plain text,
turn-keeping chunks with their session date, speakers and resolved dates, and facts dated by them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from engram.models.graph import ChunkExtraction, Edge, KnowledgeGraph, Node, SummarizedContent
from engram.models.payloads import RememberRequest
from engram.pipelines.cognify.classify import classify
from engram.pipelines.cognify.conversation import (
    TURN_CUT,
    Conversation,
    Turn,
    chunk_conversation,
    looks_like_transcript,
    parse,
    transcript,
)
from engram.pipelines.cognify.extract import build_graph
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.dates import when
from engram.pipelines.errors import BadInput

STARTED = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
LOCOMO = """Session 3, 8 May 2023, 1:56 pm
Caroline: Hey Mel! I went to the LGBTQ support group yesterday and it was so powerful.
Melanie: That's great. We went camping two weekends ago.
Caroline: I'm thinking of moving next month.
Melanie: Good luck with it!
"""


def _item(**fields):
    return RememberRequest(dataset="d", items=[fields]).items[0]


def test_turns_are_stored_as_a_transcript_that_reads_back_as_the_same_turns() -> None:
    item = _item(turns=[{"speaker": "Caroline", "text": "I went to the group\nyesterday."},
                        {"speaker": "Melanie", "text": "Nice!", "id": "D1:2", "at": "2023-05-08T14:02:00Z"}],
                 started_at="2023-05-08T13:56:00Z")
    prepared = prepare(item, 10_000, 0)
    assert prepared.doc_type == "conversation"
    assert prepared.text.splitlines() == ["2023-05-08T13:56:00+00:00", "Caroline: I went to the group yesterday.",
                                          "[D1:2 2023-05-08T14:02:00+00:00] Melanie: Nice!"]
    back = parse(prepared.text)
    assert back.started_at == STARTED
    assert back.turns == [Turn("Caroline", "I went to the group yesterday."),
                          Turn("Melanie", "Nice!", datetime(2023, 5, 8, 14, 2, tzinfo=UTC), "D1:2")]
    # The same turns are the same content: one item (dedupe by hash), another date is another.
    assert prepare(item, 10_000, 0).digest == prepared.digest
    other = _item(turns=item.model_dump()["turns"], started_at="2023-05-09T13:56:00Z")
    assert prepare(other, 10_000, 0).digest != prepared.digest


@pytest.mark.parametrize(("fields", "message"), [
    ({"text": "hi", "turns": [{"speaker": "A", "text": "hi"}]}, "exactly one of 'text', 'content_b64' or 'turns'"),
    ({"text": "hi", "started_at": "2023-05-08"}, "'started_at' dates a conversation"),
    ({"turns": []}, "at least 1 item"),
    ({"turns": [{"speaker": "", "text": "hi"}]}, "at least 1 character"),
    ({"turns": [{"speaker": "A", "text": "hi", "mood": "x"}]}, "Extra inputs"),
    ({"turns": [{"speaker": "A", "text": "hi", "id": "a b"}]}, "String should match pattern"),
])
def test_a_malformed_conversation_is_refused_by_the_payload(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _item(**fields)


@pytest.mark.parametrize(("turn", "message"), [
    ({"speaker": "Dr: Who", "text": "hi"}, "turn 1: speaker 'Dr: Who' is not a name"),
    ({"speaker": "The Very Long Name", "text": "hi"}, "turn 1: speaker 'The Very Long Name' is not a name"),
    ({"speaker": "Bo", "text": "  \n "}, "turn 1: text is blank"),
])
def test_a_conversation_engram_cannot_store_says_which_turn(turn: dict, message: str) -> None:
    item = _item(turns=[{"speaker": "Ann", "text": "hello"}, turn], name="chat")
    with pytest.raises(BadInput, match=rf"item 4 \(chat\): {message}"):
        prepare(item, 10_000, 4)


def test_a_plain_transcript_under_a_date_header_is_a_conversation() -> None:
    assert classify(None, None, LOCOMO.encode()) == "conversation"
    assert classify("chat.txt", None, LOCOMO.encode()) == "conversation"
    conversation = parse(LOCOMO)
    assert conversation.started_at == STARTED
    assert conversation.participants == ["Caroline", "Melanie"]
    assert len(conversation.turns) == 4
    iso = "2023-05-08\nuser: what did I buy yesterday?\nassistant: A bike.\n"
    assert parse(iso).started_at == datetime(2023, 5, 8, tzinfo=UTC) and looks_like_transcript(iso)


@pytest.mark.parametrize("text", [
    "Name: Bob\nAge: 31\nCity: Paris\n",  # key: value lines name each key once
    "Notes from the meeting\nAlice: hi\nBob: hello\nAlice: bye\n",  # prose before the first turn
    "Alice said hello to Bob.\nBob answered.\nNote: they met again.\n",
    "Chapter 3\nAlice: hi\nBob: hello\n",  # a header without a date is prose
])
def test_prose_and_records_are_not_conversations(text: str) -> None:
    assert not looks_like_transcript(text)
    assert classify(None, None, text.encode()) != "conversation"


def test_chunks_hold_whole_turns_without_the_header_and_carry_their_session_as_data() -> None:
    chunks = chunk_conversation(parse(LOCOMO), 30)
    turns = [line for line in LOCOMO.splitlines()[1:]]
    assert [line for c in chunks for line in c.text.splitlines()] == turns  # every turn once, whole, in order
    assert len(chunks) == 2
    assert all("Session 3" not in c.text and "2023" not in c.text for c in chunks)
    first, second = chunks
    assert (first.occurred_at, second.occurred_at) == (STARTED, STARTED)
    assert first.speakers == ["Caroline", "Melanie"] and first.conversation["turns"] == ["1", "2"]
    assert second.conversation["participants"] == ["Caroline", "Melanie"]
    assert first.dates == [
        {"phrase": "yesterday", "start": "2023-05-07", "end": "2023-05-07", "turn": "1"},
        {"phrase": "two weekends ago", "start": "2023-04-29", "end": "2023-04-30", "turn": "2"},
    ]
    assert second.dates == [{"phrase": "next month", "start": "2023-06-01", "end": "2023-06-30", "turn": "3"}]


def test_a_turn_with_its_own_time_resolves_against_it() -> None:
    conversation = Conversation([Turn("Ann", "I ran yesterday.", datetime(2023, 6, 1, 9, tzinfo=UTC))], STARTED)
    (chunk,) = chunk_conversation(conversation, 50)
    assert chunk.dates[0]["start"] == "2023-05-31"


def test_only_a_turn_longer_than_the_limit_is_cut_and_its_pieces_keep_the_speaker() -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(12))
    conversation = Conversation([Turn("Ann", "Short one."), Turn("Bob", long), Turn("Ann", "Bye.")], STARTED)
    counted = []

    def counter(text: str) -> int:
        counted.append(text)
        return len(text.split())

    chunks = chunk_conversation(conversation, 16, counter)
    assert counted  # the given counter decides the sizes
    assert all(c.token_count <= 16 for c in chunks)
    bob = [c for c in chunks if "Bob" in c.speakers]
    assert len(bob) > 1 and all(c.text.startswith("Bob: ") for c in bob)
    assert [c.cut_type for c in bob[:-1]] == [TURN_CUT] * (len(bob) - 1)
    assert [c.conversation["continued"] for c in bob] == [False] + [True] * (len(bob) - 1)
    assert " ".join(c.text.removeprefix("Bob: ") for c in bob) == long
    assert "Short one." in chunks[0].text and chunks[-1].text.endswith("Ann: Bye.")


def test_a_fact_from_a_conversation_chunk_is_dated_by_its_resolved_phrase() -> None:
    dataset, chunk = uuid.uuid4(), uuid.uuid4()
    text = "Caroline: I went to the LGBTQ support group yesterday and it was so powerful."
    extraction = ChunkExtraction(
        graph=KnowledgeGraph(nodes=[Node(id="c", name="Caroline", type="person"),
                                    Node(id="g", name="LGBTQ support group", type="organization")],
                             edges=[Edge(source_node_id="c", target_node_id="g", relationship_name="went to")]),
        summary=SummarizedContent(summary="Caroline went to a support group."))
    (chunk_row,) = chunk_conversation(parse(f"{STARTED.isoformat()}\n{text}\nMelanie: ok"), 100)
    context = {"occurred_at": STARTED.isoformat(), "dates": chunk_row.dates, "conversation": chunk_row.conversation}
    draft = build_graph(dataset, [(chunk, text)], [extraction], title="Conversation", contexts=[context])
    (fact,) = [e for e in draft.edges if e.relationship == "went_to"]
    (interval,) = fact.intervals
    assert interval.stated.valid_from == when(2023, 5, 7)
    assert interval.stated.asserted == when(2023, 5, 8)  # said no earlier than its session
    assert not [e for e in draft.edges if e.properties.get("main")]  # no speaker becomes the main entity
    plain = build_graph(dataset, [(chunk, text)], [extraction])
    (undated,) = [e for e in plain.edges if e.relationship == "went_to"]
    assert undated.intervals[0].stated.valid_from is None  # without the session nothing is dated
