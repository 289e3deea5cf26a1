"""Agent traces become memory (issue 36) through the shared offline worker: a decorated producer
function's traces are persisted as entries of their session and distilled into memory by the
improve stages persist_agent_traces and extract_agent_context; the decorator's opt-in injection
puts that memory into a litellm call made inside the function (litellm's mock provider)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from improve_helpers import rows, scalar, settled, stages, wait_until

from engram.pipelines.ids import trace_entry_id

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agentic.md"
USER = "alice"


def _traces(store, session: str) -> list[dict]:
    return rows(store, "SELECT * FROM agent_traces WHERE session_id = :s ORDER BY seq", s=session)


def _improve(worker, store, dataset: str, session: str) -> list[dict]:
    """An explicit improve of the session, waited for; its runs (every pass), oldest first."""
    before = scalar(store, "SELECT count(*) FROM pipeline_runs WHERE pipeline = 'improve' AND :s = ANY(session_ids)",
                    s=session)
    started = worker.client.improve(dataset, session_ids=[session], user=USER)
    assert started.status in ("started", "busy", "no_op")
    wait_until(lambda: settled(store, dataset), timeout=300, what="improve settled")
    runs = rows(store, "SELECT * FROM pipeline_runs WHERE pipeline = 'improve' AND :s = ANY(session_ids)"
                       " ORDER BY created_at", s=session)
    return runs[before:]


@pytest.fixture(scope="module")
def kb(worker):
    name = f"traces-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, user=USER, background=False, timeout=300, items=[
        {"text": "Harbor Cafe serves green tea and espresso. Harbor Cafe is in Port Alder.", "name": "cafe.md"}])
    assert [s.status for s in statuses] == ["completed"]
    return name


def test_a_decorated_functions_trace_becomes_a_session_entry_and_its_preference_memory(worker, store, kb):
    from engram.tasks.agent_memory import agent_memory

    session = f"chat-{uuid.uuid4().hex[:6]}"

    @agent_memory(worker.app, dataset=kb, user=USER, session_id=session, timeout=60)
    def answer(question: str) -> str:
        if "order" in question:
            raise TimeoutError("the order service timed out")
        return "Harbor Cafe serves green tea."

    question = "I prefer green tea over coffee. What does Harbor Cafe serve?"
    assert answer(question) == "Harbor Cafe serves green tea."
    with pytest.raises(TimeoutError):
        answer("Where is my order 7?")
    wait_until(lambda: len(_traces(store, session)) == 2, what="two traces stored")
    first, failed = _traces(store, session)
    assert "Harbor Cafe" in first["memory"]  # the memory the call was shown is part of its trace

    runs = _improve(worker, store, kb, session)
    got = stages(store, runs[0]["id"])
    assert (got["persist_agent_traces"]["status"], got["persist_agent_traces"]["counts"]) == (
        "completed", {"traces": 2, "entries": 2, "without_user": 0})
    assert got["extract_agent_context"]["status"] == "completed"
    assert got["extract_agent_context"]["counts"]["published"] == 1

    # The traces are entries of their session: question, answer (or error), memory shown.
    entry = rows(store, "SELECT * FROM session_entries WHERE id = :i", i=trace_entry_id(first["id"]))[0]
    assert (entry["session_id"], entry["question"], entry["answer"]) == (session, question,
                                                                        "Harbor Cafe serves green tea.")
    assert entry["context"] == first["memory"] and entry["occurred_at"] == first["created_at"]
    error_entry = rows(store, "SELECT * FROM session_entries WHERE id = :i", i=trace_entry_id(failed["id"]))[0]
    assert error_entry["answer"] == "ERROR: TimeoutError: the order service timed out"
    assert error_entry["confidence"] == 0.5
    view = worker.client.sessions(kb, session_id=session, user=USER)["sessions"][0]
    assert view["entries"] == 2

    # The stated preference is memory: a lesson, and recall finds it.
    (lesson,) = rows(store, "SELECT * FROM lessons WHERE session_id = :s", s=session)
    assert lesson["statement"] == "alice said: I prefer green tea over coffee."
    assert lesson["member_entry_ids"] == [str(entry["id"])]
    result = worker.client.recall("Which drink does alice prefer?", datasets=[kb], user=USER,
                                  search_type="CHUNKS", top_k=5, node_sets=["session_learnings"])
    assert any("alice said: I prefer green tea over coffee." in item.text for item in result.items)
    # A single failure is no recurring outcome: rejected, and kept with its reason.
    decisions = {r["working_statement"]: (r["accepted"], r["reason"])
                 for r in rows(store, "SELECT * FROM lesson_decisions WHERE session_id = :s", s=session)}
    assert decisions == {"I prefer green tea over coffee.": (True, None),
                         "answer failed with TimeoutError": (False, "not_durable")}

    # Idempotent: nothing new → no_op; the same trace redelivered stores nothing new.
    again = worker.client.call("engram.agent.trace", trace_id=str(first["id"]), dataset=kb, user=USER,
                               session_id=session, function="answer", inputs="x", result="y")
    assert again["status"] == "duplicate"
    assert worker.client.improve(kb, session_ids=[session], user=USER).status == "no_op"

    # The failure recurs: the next improve learns the tool outcome, once.
    with pytest.raises(TimeoutError):
        answer("Where is my order 8?")
    wait_until(lambda: len(_traces(store, session)) == 3, what="third trace stored")
    runs = _improve(worker, store, kb, session)
    assert stages(store, runs[0]["id"])["extract_agent_context"]["counts"]["published"] == 1
    statements = sorted(r["statement"] for r in rows(store, "SELECT * FROM lessons WHERE session_id = :s",
                                                           s=session))
    assert statements == ["alice said: I prefer green tea over coffee.",
                          "answer fails repeatedly with TimeoutError."]
    assert scalar(store, "SELECT count(*) FROM session_entries WHERE session_id = :s", s=session) == 3
    marks = rows(store, "SELECT trace_watermark_seq, context_watermark_seq FROM session_improve_state"
                        " WHERE session_id = :s", s=session)[0]
    top = max(t["seq"] for t in _traces(store, session))
    assert marks == {"trace_watermark_seq": top, "context_watermark_seq": top}


def test_injection_puts_the_memory_into_a_litellm_call_inside_the_decorated_function(worker, kb):
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    from engram.tasks.agent_memory import agent_memory

    sent = []

    class SentToModel(CustomLogger):
        def log_pre_api_call(self, model, messages, kwargs):
            sent.append(kwargs["input"])  # what litellm handed its (mock) provider

    capture = SentToModel()
    litellm.callbacks.append(capture)
    try:
        @agent_memory(worker.app, dataset=kb, user=USER, session_id=f"inj-{uuid.uuid4().hex[:6]}", timeout=60,
                      inject=True)
        async def answer(question: str) -> str:
            reply = await litellm.acompletion(model="openai/gpt-4o-mini", mock_response="Green tea.",
                                              messages=[{"role": "user", "content": question}])
            return reply.choices[0].message.content

        assert asyncio.run(answer("What does Harbor Cafe serve?")) == "Green tea."
    finally:
        litellm.callbacks.remove(capture)
    [[message]] = sent
    assert message["content"].startswith("Additional Memory Context:\n")
    assert "Harbor Cafe" in message["content"].split("Original Input:")[0]
    assert message["content"].endswith("\n\nOriginal Input:\nWhat does Harbor Cafe serve?")


def test_the_documented_injection_snippet_runs_verbatim(worker, tmp_path):
    section = DOCS.read_text().split("\n## Agent memory", 1)[1].split("\n## ", 1)[0]
    snippet = re.findall(r"```python\n(.*?)```", section, re.S)[-1]
    env = {"PATH": "/usr/bin:/bin", "ENGRAM_REDIS_URL": worker.redis_url, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # engram as the tests import it
    done = subprocess.run([sys.executable, "-c", snippet], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.startswith("Additional Memory Context:\n") and "Seabird" in out.split("Original Input:")[0]
    assert out.strip().endswith("Original Input:\nWhen does the Seabird ship?\nIn May.")
