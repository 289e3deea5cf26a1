"""AGENTIC_COMPLETION end to end (SPEC 8, 8b): a real worker answering from a replay cassette,
real Postgres. The documents are cognified by the shared offline worker; the agent worker
(replay LLM, a host tool allow-listed) only recalls, so the cassette holds agent steps only.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from engram.pipelines.agentic.skills import SKILL_PAGE_CHARS
from engram.tasks.client import EngramError

HERE = Path(__file__).parent
DOCS = {"acme.md": "Alice Moreau is the CEO of Acme Robotics. Acme Robotics makes the Seabird drone.",
        "lyon.md": "Acme Robotics is based in Lyon."}
LONG_SKILL = "".join(f"Step {i:05d}: check the ticket field number {i}.\n" for i in range(700))  # ~32,000 chars
PAGES = -(-len(LONG_SKILL) // SKILL_PAGE_CHARS)
BOB, BOBS = f"bob-{uuid.uuid4().hex[:6]}", f"vault-{uuid.uuid4().hex[:6]}"


def step(thought="", tool=None, args=None, final=None):
    call = {"tool_name": tool, "arguments": args or {}} if tool else None
    return {"contains": None, "response_model": "AgentStep",
            "response": {"thought": thought, "tool_call": call, "final_answer": final}}


def entry(contains, response, model="AgentStep"):
    return {"contains": contains, "response_model": model, "response": response}


def agent(contains, thought="", tool=None, args=None, final=None):
    e = step(thought, tool, args, final)
    e["contains"] = contains
    return e


# Most specific first: later steps' prompts hold the earlier steps' transcript.
CASSETTE = [
    # 0. tools on the write built-in: a spec stored as read, one declared delete
    agent("[1] result: ERROR: tool 'scribble' needs 'write'", final="I may not scribble here."),
    agent("# Task\nScribble that the Seabird is blue.", "scribble it", "scribble", {"text": "The Seabird is blue."}),
    agent("[1] result: ERROR: tool 'seal' failed: the note was not stored", final="The note was refused."),
    agent("[1] call: seal(", final="Sealed."),
    agent("# Task\nSeal that the Seabird is sealed.", "seal it", "seal", {"text": "The Seabird is sealed."}),
    # 1. tool then answer, opening a skill
    agent("[2] result: # Skill support", final="Alice Moreau runs Acme Robotics."),
    agent("[1] result: [1] (fact)", "open the skill", "load_skill", {"name": "support"}),
    agent("# Task\nWho runs Acme Robotics?", "search first", "search_memory",
          {"query": "Acme Robotics CEO", "search_type": "TRIPLET_COMPLETION"}),
    # 2. a note without write grant / with it
    agent("[1] result: ERROR: tool 'remember_note' needs 'write'", final="I could not store the note."),
    agent("[1] result: note queued", final="Noted."),
    agent("# Task\nRemember that the Seabird ships in May.", "store it", "remember_note",
          {"text": "The Seabird drone ships in May."}),
    # 3. a stored tool whose handler is an import path, then the allow-listed host tool
    agent("[2] result: order 42", final="Order 42 has shipped."),
    agent("[1] result: ERROR: tool 'shell' has no allow-listed handler", "try the order tool", "order_status",
          {"order": "42"}),
    agent("# Task\nWhere is order 42?", "run it", "shell", {"cmd": "touch /tmp/engram-pwned"}),
    # 4. a long skill read in pages: each page's result asks for the next one
    agent(f"[{PAGES}] result: # Skill longproc (page {PAGES} of {PAGES})", final="Checked all 700 fields."),
    *[agent(f"[{n}] result: # Skill longproc (page {n} of {PAGES})", "next page", "load_skill",
            {"name": "longproc", "page": n + 1}) for n in range(PAGES - 1, 0, -1)],
    agent("# Task\nFollow the long procedure.", "open it", "load_skill", {"name": "longproc"}),
    # 5. probing another user's dataset through every built-in tool
    agent("[3] result: [1] (passage", final="Nothing about launch codes here."),
    agent("[2] result: ERROR: tool 'load_skill' failed", "plain search", "search_memory",
          {"query": "secret launch code", "search_type": "CHUNKS"}),
    agent("[1] result: ERROR: tool 'search_memory' takes arguments", "their skill", "load_skill", {"name": "secret"}),
    agent("# Task\nWhat is Bob's launch code?", "look in bob's dataset", "search_memory",
          {"query": "launch code", "dataset": BOBS}),
    # skill improvement
    entry("# Skill support", {"proposed_procedure": "1. search facts with TRIPLET_COMPLETION\n2. answer",
                              "rationale": "the runs failed to search facts first", "confidence": 0.8},
          "DraftedProcedure"),
    entry("", "(unmatched)", "text"),
]


@pytest.fixture(scope="module")
def kb(worker):
    name = f"agentic-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, items=[{"text": t, "name": n} for n, t in DOCS.items()],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(DOCS)
    worker.client.call("engram.skills.define", dataset=name, name="support", description="answer support questions",
                       procedure="1. search memory\n2. answer", tools=["search_memory", "order_status", "remember_note"])
    return name


@pytest.fixture(scope="module")
def agent_worker(spawn_worker, tmp_path_factory, kb):
    cassette = tmp_path_factory.mktemp("agentic") / "cassette.json"
    cassette.write_text(json.dumps({"version": 1, "entries": CASSETTE}))
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))  # the host tools, then ours
    handle = spawn_worker({"ENGRAM_LLM_MODEL": f"replay:{cassette}", "PYTHONPATH": path,
                           "ENGRAM_AGENT_TOOLS": "agent_host_tools:order_status",
                           "ENGRAM_AGENT_SKILL_IMPROVEMENT": "true"})
    yield handle
    handle.stop()


def ask(handle, question, dataset, user="default", **kw):
    return handle.client.call("engram.recall", question=question, datasets=[dataset], user=user,
                              search_type="AGENTIC_COMPLETION", **kw)


def grant(store, dataset_name, owner, grantee, permission):
    with store.unit_of_work() as uow:
        dataset = uow.access.authorise(dataset_name, owner, "read")
        uow.access.grant(dataset, f"user:{uow.access.ensure_user(grantee)}", permission)


def test_tool_then_answer_records_a_skill_run_that_feedback_scores(agent_worker, kb):
    result = ask(agent_worker, "Who runs Acme Robotics?", kb)
    answer = result["items"][0]
    assert answer["kind"] == "answer" and answer["text"] == "Alice Moreau runs Acme Robotics."
    assert result["agent"]["stop_reason"] == "final_answer" and result["agent"]["iterations"] == 3
    assert "Alice Moreau" in result["agent"]["steps"][0]["result"]  # the search tool read the graph
    [run_id] = result["agent"]["skill_run_ids"]
    view = agent_worker.client.call("engram.skills.list", dataset=kb, skill="support")
    [run] = [r for r in view["runs"] if r["id"] == run_id]
    assert run["task"] == "Who runs Acme Robotics?" and run["score"] is None
    assert [t["tool"] for t in run["tool_trace"]] == ["search_memory", "load_skill"]
    agent_worker.client.call("engram.skills.feedback", dataset=kb, run_id=run_id, score=0.1)
    view = agent_worker.client.call("engram.skills.list", dataset=kb, skill="support")
    assert [r["score"] for r in view["runs"] if r["id"] == run_id] == [0.1]


def test_improvement_proposal_then_apply_keeps_the_old_procedure(agent_worker, kb):
    ask(agent_worker, "Who runs Acme Robotics?", kb)  # a run to learn from
    runs = agent_worker.client.call("engram.skills.list", dataset=kb, skill="support")["runs"]
    for r in runs:
        agent_worker.client.call("engram.skills.feedback", dataset=kb, run_id=r["id"], score=0.2)
    proposed = agent_worker.client.call("engram.skills.improve", dataset=kb, skill="support")
    assert proposed["status"] == "proposed" and proposed["confidence"] == 0.8
    with pytest.raises(EngramError, match="does not exist in this dataset"):
        agent_worker.client.call("engram.skills.apply", dataset=kb, skill="nosuch", proposal_id=proposed["proposal_id"])
    applied = agent_worker.client.call("engram.skills.apply", dataset=kb, skill="support",
                                       proposal_id=proposed["proposal_id"])
    assert applied["status"] == "applied"
    [skill] = agent_worker.client.call("engram.skills.list", dataset=kb, skill="support")["skills"]
    assert skill["procedure"].startswith("1. search facts with TRIPLET_COMPLETION")
    assert skill["earlier_procedures"] == ["1. search memory\n2. answer"]
    with pytest.raises(EngramError, match="is applied, not proposed"):
        agent_worker.client.call("engram.skills.apply", dataset=kb, skill="support", proposal_id=proposed["proposal_id"])


def test_a_read_only_grantee_gets_an_error_result_and_nothing_is_written(agent_worker, kb, store):
    reader = f"reader-{uuid.uuid4().hex[:6]}"
    grant(store, kb, "default", reader, "read")
    result = ask(agent_worker, "Remember that the Seabird ships in May.", kb, user=reader)
    assert result["agent"]["steps"][0]["result"].startswith("ERROR: tool 'remember_note' needs 'write'")
    assert result["items"][0]["text"] == "I could not store the note."
    # The owner may write: the note is queued as new content of the dataset.
    owner = ask(agent_worker, "Remember that the Seabird ships in May.", kb)
    assert owner["items"][0]["text"] == "Noted."


def test_a_tool_on_a_write_handler_cannot_be_declared_read(agent_worker, kb):
    with pytest.raises(EngramError, match="declares permission 'read', but its handler 'builtin:remember_note' "
                                          "needs at least 'write'"):
        agent_worker.client.call("engram.skills.define_tool", dataset=kb, name="jot", description="jot a note",
                                 handler="builtin:remember_note", arguments={"text": "the note"}, required=["text"],
                                 permission="read")
    tools = agent_worker.client.call("engram.skills.list", dataset=kb)["tools"]
    assert "jot" not in [t["name"] for t in tools]  # refused: nothing stored
    # Declaring none takes the handler's; a stronger one is kept.
    stored = agent_worker.client.call("engram.skills.define_tool", dataset=kb, name="jot", description="jot a note",
                                      handler="builtin:remember_note", arguments={"text": "the note"})
    assert stored["permission"] == "write" and stored["runnable"] is True
    tools = agent_worker.client.call("engram.skills.list", dataset=kb)["tools"]
    assert [t["permission"] for t in tools if t["name"] == "jot"] == ["write"]


def test_a_stored_read_spec_on_the_write_handler_still_needs_write(agent_worker, kb, store):
    from engram.pipelines.agentic.tools import ToolSpec

    with store.unit_of_work() as uow:  # as stored before define_tool refused it
        uow.agentic.put_tool(uow.access.authorise(kb, "default", "write"),
                             ToolSpec("scribble", "scribble a note", "builtin:remember_note", {"text": "the note"},
                                      ("text",), "read"))
    tools = agent_worker.client.call("engram.skills.list", dataset=kb)["tools"]
    assert [t["permission"] for t in tools if t["name"] == "scribble"] == ["write"]  # what a call needs
    reader = f"reader-{uuid.uuid4().hex[:6]}"
    grant(store, kb, "default", reader, "read")
    result = ask(agent_worker, "Scribble that the Seabird is blue.", kb, user=reader, skills=[], tools=["scribble"])
    [first] = result["agent"]["steps"][:1]
    assert first["result"] == (f"ERROR: tool 'scribble' needs 'write' on dataset {kb!r}, "
                               f"which user {reader!r} does not have")
    assert result["items"][0]["text"] == "I may not scribble here."


def test_a_refused_downstream_write_is_an_error_result_never_queued(agent_worker, kb, store):
    agent_worker.client.call("engram.skills.define_tool", dataset=kb, name="seal", description="seal a note",
                             handler="builtin:remember_note", arguments={"text": "the note"}, required=["text"],
                             permission="delete")
    sealer = f"sealer-{uuid.uuid4().hex[:6]}"  # delete passes the dispatcher; remember needs write
    grant(store, kb, "default", sealer, "read")
    grant(store, kb, "default", sealer, "delete")
    result = ask(agent_worker, "Seal that the Seabird is sealed.", kb, user=sealer, skills=[], tools=["seal"])
    first = result["agent"]["steps"][0]["result"]
    assert first.startswith("ERROR: tool 'seal' failed: the note was not stored: ")
    assert f"user {sealer!r} has no write grant on dataset {kb!r}" in first and "queued" not in first
    assert result["items"][0]["text"] == "The note was refused."
    # With write too, the same call is queued.
    grant(store, kb, "default", sealer, "write")
    result = ask(agent_worker, "Seal that the Seabird is sealed.", kb, user=sealer, skills=[], tools=["seal"])
    assert result["agent"]["steps"][0]["result"] == f"note queued for memory in dataset {kb!r}"
    assert result["items"][0]["text"] == "Sealed."


def test_no_grant_means_no_recall_and_no_tool_reads_another_dataset(agent_worker, kb):
    with pytest.raises(EngramError, match="does not exist for user|has no read grant"):
        ask(agent_worker, "Who runs Acme Robotics?", kb, user=f"stranger-{uuid.uuid4().hex[:6]}")
    with pytest.raises(EngramError, match="exactly one dataset"):
        agent_worker.client.call("engram.recall", question="Who runs Acme Robotics?", datasets=[kb, "other"],
                                 search_type="AGENTIC_COMPLETION")
    with pytest.raises(EngramError, match="AGENTIC_COMPLETION only"):
        agent_worker.client.call("engram.recall", question="x", datasets=[kb], skills=["support"])


def test_a_handler_path_stored_in_data_is_refused_and_a_host_tool_runs(agent_worker, kb):
    marker = Path("/tmp/engram-pwned")
    marker.unlink(missing_ok=True)
    stored = agent_worker.client.call("engram.skills.define_tool", dataset=kb, name="shell", description="a shell",
                                      handler="os:system", arguments={"cmd": "a command"}, required=["cmd"])
    assert stored["runnable"] is False and "do not allow-list" in stored["warning"]
    result = ask(agent_worker, "Where is order 42?", kb, skills=[], tools=["shell", "order_status"])
    steps = result["agent"]["steps"]
    assert steps[0]["result"] == "ERROR: tool 'shell' has no allow-listed handler ('os:system' is refused)"
    assert steps[1]["result"] == f"order 42 of default in {kb}: shipped"
    assert result["items"][0]["text"] == "Order 42 has shipped." and not marker.exists()


def test_a_thirty_thousand_character_skill_is_read_in_pages(agent_worker, kb):
    agent_worker.client.call("engram.skills.define", dataset=kb, name="longproc", description="a long one",
                             procedure=LONG_SKILL, tools=[])
    result = ask(agent_worker, "Follow the long procedure.", kb, skills=["longproc"])
    pages = [s["result"] for s in result["agent"]["steps"] if s.get("tool") == "load_skill"]
    assert len(pages) == PAGES and "Step 00000" in pages[0] and "Step 00699" in pages[-1]
    assert not any("[truncated]" in p for p in pages)
    assert result["items"][0]["text"] == "Checked all 700 fields."


def test_agent_memory_and_traces_for_a_decorated_producer_function(agent_worker, kb, store):
    from engram.tasks.agent_memory import agent_memory, memory_prompt

    session = f"agent-{uuid.uuid4().hex[:6]}"

    @agent_memory(agent_worker.app, dataset=kb, session_id=session, timeout=60)
    def answer(question):
        return memory_prompt(question)

    first = answer("Who is the CEO of Acme Robotics?")
    assert first.startswith("Additional Memory Context:\n") and "Alice Moreau" in first
    assert first.endswith("Original Input:\nWho is the CEO of Acme Robotics?")
    # The trace is enqueued; the next call's memory shows it once it is stored.
    trace_rows = _wait_for_traces(store, session, 1)
    second = answer("And where is it based?")
    assert "earlier call" in second and "Who is the CEO of Acme Robotics?" in second
    assert len(_wait_for_traces(store, session, 2)) == 2 and len(trace_rows) == 1
    # A redelivered trace message stores nothing new.
    again = agent_worker.client.call("engram.agent.trace", trace_id=str(trace_rows[0]), dataset=kb,
                                     session_id=session, function="answer", inputs="x", result="y")
    assert again["status"] == "duplicate"


def _wait_for_traces(store, session, count, timeout=60.0):
    import time

    deadline = time.monotonic() + timeout
    while True:
        with store.unit_of_work() as uow:
            rows = [r[0] for r in uow.conn.execute(text(
                "SELECT id FROM agent_traces WHERE session_id = :s ORDER BY created_at"), {"s": session})]
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


def test_no_built_in_tool_reads_a_dataset_the_caller_has_no_grant_on(agent_worker, worker, kb):
    worker.client.remember(dataset=BOBS, user=BOB, create_dataset=True, background=False, timeout=300,
                           items=[{"text": "Bob's secret launch code is 7731.", "name": "vault.md"}])
    worker.client.call("engram.skills.define", dataset=BOBS, user=BOB, name="secret",
                       description="bob only", procedure="BOB SECRET PROCEDURE", tools=[])
    result = ask(agent_worker, "What is Bob's launch code?", kb, skills=[])
    steps = result["agent"]["steps"]
    assert "unknown ['dataset']" in steps[0]["result"]
    assert steps[1]["result"].startswith("ERROR: tool 'load_skill' failed: no skill named 'secret'")
    assert not any("7731" in str(s) or "BOB SECRET" in str(s) for s in steps)
    assert not any("7731" in i["text"] for i in result["items"])
    # Naming Bob's dataset directly is refused before any tool runs.
    with pytest.raises(EngramError, match="does not exist for user|has no read grant"):
        ask(agent_worker, "What is Bob's launch code?", BOBS)


def test_every_skills_command_of_the_cli(agent_worker, kb, tmp_path):
    """`engram skills define / tool / list / score / improve / apply` as a user types them (each
    failed before: `define` with a TypeError, the others with an ImportError)."""
    from cli_helpers import engram, one_line_error

    def cli(*args):
        out = engram(agent_worker.redis_url, *args)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    procedure = tmp_path / "triage.md"
    procedure.write_text("1. search memory for the product\n2. answer")
    define = ("skills", "define", "triage", "-d", kb, "--description", "triage a ticket",
              "--procedure", str(procedure), "--tool", "search_memory")
    assert "skill triage stored (0 earlier procedure(s) kept)" in cli(*define)
    procedure.write_text("1. search memory\n2. check the order\n3. answer")
    assert "skill triage stored (1 earlier procedure(s) kept)" in cli(*define)
    assert "tool order_lookup stored" in cli("skills", "tool", "order_lookup", "-d", kb,
                                             "--description", "an order's status",
                                             "--handler", "agent_host_tools:order_status",
                                             "--arguments", '{"order": "the order number"}', "--required", "order")
    assert "--arguments" in one_line_error(engram(agent_worker.redis_url, "skills", "tool", "bad", "-d", kb,
                                                  "--description", "x", "--handler", "h", "--arguments", "{oops"))
    [run_id] = ask(agent_worker, "Who runs Acme Robotics?", kb)["agent"]["skill_run_ids"]
    view = json.loads(cli("skills", "list", "-d", kb, "--json"))
    assert {s["name"] for s in view["skills"]} >= {"support", "triage"}
    assert "order_lookup" in {t["name"] for t in view["tools"]} and run_id in {r["id"] for r in view["runs"]}
    table = cli("skills", "list", "-d", kb, "--skill", "triage")
    assert "triage a ticket" in table and "search_memory" in table
    for run in view["runs"]:
        assert f"run {run['id']} scored 0.20" in cli("skills", "score", run["id"], "0.2", "-d", kb)
    assert {r["score"] for r in agent_worker.client.call("engram.skills.list", dataset=kb)["runs"]} == {0.2}
    proposed = cli("skills", "improve", "support", "-d", kb)
    assert proposed.startswith("proposed: ")
    proposal_id = proposed.split()[1]
    assert "applied: skill support now has" in cli("skills", "apply", "support", proposal_id, "-d", kb)
    line = one_line_error(engram(agent_worker.redis_url, "skills", "list", "-d", f"nosuch-{uuid.uuid4().hex[:6]}"))
    assert "does not exist" in line and "engram datasets" in line
