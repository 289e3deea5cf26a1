"""Agent traces as memory (issue 36): the pure parts of persist_agent_traces (a trace's session
entry) and extract_agent_context (which statements and tool outcomes are admitted, and why not)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from engram.pipelines.ids import lesson_id, trace_entry_id
from engram.pipelines.improve.stages.agent_context import decide, stated
from engram.pipelines.improve.stages.agent_traces import entry_of, user_words

DATASET = uuid.uuid4()
AT = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def trace(inputs, result=None, error=None, function="answer", memory="- Alice runs Acme."):
    return {"id": uuid.uuid4(), "dataset_id": DATASET, "session_id": "s1", "user_id": uuid.uuid4(),
            "user_name": "alice", "function": function, "inputs": inputs, "result": result, "error": error,
            "memory": memory, "created_at": AT}


def call(*args, **kwargs) -> str:
    return repr({"args": args, "kwargs": kwargs})  # what the decorator stores


def test_the_callers_words_are_the_text_arguments_of_the_stored_call():
    assert user_words(call("I prefer tea.", top=3, tenant="acme")) == "I prefer tea.\nacme"
    assert user_words(call({"messages": ["hi", "there"]})) == "hi\nthere"
    assert user_words(call("it's \"quoted\"\nover lines")) == "it's \"quoted\"\nover lines"
    cut = call("I prefer tea. " * 400)[:4000]  # the decorator cuts inputs at 4,000 characters
    assert user_words(cut).startswith("I prefer tea. I prefer tea.")
    opaque = call(object())
    assert user_words(opaque) == opaque  # no text at all: the inputs as stored
    assert user_words("free text") == "free text"


def test_a_trace_becomes_one_entry_with_its_memory_answer_or_error():
    ok = trace(call("Who runs Acme?"), result="Alice Moreau.")
    entry = entry_of(ok)
    assert entry["entry_id"] == trace_entry_id(ok["id"]) == entry_of(ok)["entry_id"]  # stable: stored once
    assert (entry["question"], entry["answer"], entry["context"]) == ("Who runs Acme?", "Alice Moreau.",
                                                                      "- Alice runs Acme.")
    assert (entry["confidence"], entry["occurred_at"], entry["session_id"]) == (1.0, AT, "s1")
    failed = entry_of(trace(call("Where is order 7?"), error="TimeoutError: order service"))
    assert failed["answer"] == "ERROR: TimeoutError: order service" and failed["confidence"] < 0.75


def test_stated_facts_and_preferences_are_found_and_plain_questions_are_not():
    text = "I prefer short answers. My dog is called Rex! Where is my order? I work at Acme Robotics.\nThanks"
    assert stated(text) == ["I prefer short answers.", "My dog is called Rex!", "I work at Acme Robotics."]
    assert stated("What is the capital of France?") == []


def test_decisions_admit_stated_preferences_and_keep_rejections_with_reasons():
    t = trace(call("I prefer green tea over coffee. Maybe I like jazz today. Do I like cats?"),
              result="Noted. I always use metric units.")
    known_statement = "alice said: I work at Acme Robotics."
    t2 = trace(call("I work at Acme Robotics."), result="ok")
    decisions = decide(DATASET, [t, t2], [], {lesson_id(DATASET, known_statement)})
    got = {x.proposal.working_statement: (x.accepted, x.reason) for x in decisions}
    assert got == {
        "I prefer green tea over coffee.": (True, None),
        "Maybe I like jazz today.": (False, "not_durable"),
        "Do I like cats?": (False, "not_durable"),
        "I always use metric units.": (False, "unsupported"),  # only in the function's answer
        "I work at Acme Robotics.": (False, "already_known"),
    }
    accepted = next(x for x in decisions if x.accepted)
    assert accepted.written.statement == "alice said: I prefer green tea over coffee."
    assert accepted.proposal.member_entry_ids == [str(trace_entry_id(t["id"]))]


def test_a_tool_outcome_is_learned_only_when_it_recurs():
    first = trace(call("Where is order 7?"), error="TimeoutError: order service timed out",
                  function="test_x.<locals>.lookup")
    [once] = decide(DATASET, [first], [], set())
    assert (once.proposal.working_statement, once.accepted, once.reason) == (
        "lookup failed with TimeoutError", False, "not_durable")
    second = trace(call("Where is order 8?"), error="TimeoutError: again", function="lookup")
    [again] = decide(DATASET, [second], [first], set())
    assert again.accepted and again.written.statement == "lookup fails repeatedly with TimeoutError."
    assert "2 traced calls failed" in again.written.why_learned
    assert again.proposal.member_entry_ids == [str(trace_entry_id(second["id"]))]
    other = trace(call("x"), error="KeyError: 'y'", function="lookup")
    assert [x.reason for x in decide(DATASET, [other], [first], set())] == ["not_durable"]  # another error type
    assert decide(DATASET, [trace(call("fine"), result="ok")], [first], set()) == []  # old failures decided before
