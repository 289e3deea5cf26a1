"""The agentic tool loop (SPEC 8) through the real LLM gateway answering from a replay cassette.

Each step's prompt carries the transcript so far, so cassette entries match on what the loop
has done ("[1] call: ..." appears only from the second step on): the most specific first.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from engram.adapters.llm import usage
from engram.adapters.llm.gateway import LLMGateway
from engram.adapters.llm.providers import ReplayProvider
from engram.pipelines.agentic.builtins import BUILTIN_TOOLS, builtin_registry
from engram.pipelines.agentic.loop import AgentPorts, Limits, run_agent
from engram.pipelines.agentic.skills import (Skill, SkillRun, apply_proposal, improvement_candidates,
                                             skill_page)
from engram.pipelines.agentic.tools import (MAX_TOOL_OUTPUT, Dispatcher, HandlerRegistry, ToolContext,
                                            ToolInvocationError, ToolSpec, exposed_tools)

TASK = "Who runs Harbor Dynamics?"


def step(thought="", tool=None, args=None, final=None):
    call = {"tool_name": tool, "arguments": args or {}} if tool else None
    return {"thought": thought, "tool_call": call, "final_answer": final}


def gateway(tmp_path, entries):
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    return LLMGateway(ReplayProvider(path))


class FakeMemory:
    """The ports the built-in handlers use: recall/remember on the one authorised dataset."""

    def __init__(self, skills=()):
        self.skills = {s.name: s for s in skills}
        self.searches, self.notes = [], []

    def recall(self, question, search_type, top_k):
        self.searches.append((question, search_type, top_k))
        return "[1] (fact) Alice Moreau ceo_of Harbor Dynamics"

    def remember(self, text):
        self.notes.append(text)
        return "noted"


def dispatcher(memory, grants=("read",), tools=BUILTIN_TOOLS, registry=None):
    return Dispatcher({t.name: t for t in tools}, registry or builtin_registry(),
                      ToolContext("kb", "alice", frozenset(grants), memory))


def run(tmp_path, entries, memory=None, limits=Limits(), skills=(), **ports):
    memory = memory or FakeMemory(skills)
    ports = AgentPorts(gateway=gateway(tmp_path, entries), dispatch=dispatcher(memory), **ports)
    return run_agent(TASK, "[1] (fact) Harbor Dynamics located_in Lyon", skills, BUILTIN_TOOLS, ports, limits), memory


def test_a_final_answer_on_the_first_step_ends_the_loop(tmp_path):
    out, memory = run(tmp_path, [{"contains": TASK, "response_model": "AgentStep", "response": step(final="Alice")}])
    assert (out.answer, out.stop_reason, out.forced_final, out.iterations) == ("Alice", "final_answer", False, 1)
    assert memory.searches == [] and out.skill_runs == []


def test_a_tool_call_then_an_answer(tmp_path):
    out, memory = run(tmp_path, [
        {"contains": "[1] result: [1] (fact) Alice", "response_model": "AgentStep", "response": step(final="Alice Moreau")},
        {"contains": TASK, "response_model": "AgentStep",
         "response": step("look it up", "search_memory", {"query": "Harbor Dynamics CEO", "top_k": 3})},
    ])
    assert out.answer == "Alice Moreau" and out.iterations == 2 and not out.forced_final
    assert memory.searches == [("Harbor Dynamics CEO", "CHUNKS", 3)]
    assert out.trace[0].tool == "search_memory"


def test_max_iterations_then_one_forced_final_completion(tmp_path):
    # Every step searches something new (the step number is in the growing transcript).
    entries = [{"contains": f"[{n}] call:", "response_model": "AgentStep",
                "response": step(tool="search_memory", args={"query": f"q{n + 1}"})} for n in range(6, 0, -1)]
    entries += [{"contains": TASK, "response_model": "AgentStep", "response": step(tool="search_memory", args={"query": "q1"})},
                {"contains": "ran out of steps (max_iterations)", "response_model": "text", "response": "Probably Alice."}]
    out, memory = run(tmp_path, entries)
    assert (out.iterations, out.stop_reason, out.forced_final, out.answer) == (6, "max_iterations", True, "Probably Alice.")
    assert len(memory.searches) == 6


def test_the_token_budget_stops_the_loop(tmp_path):
    spent = iter([0, 10, 999])
    entries = [{"contains": "[1] call:", "response_model": "AgentStep", "response": step(tool="search_memory", args={"query": "b"})},
               {"contains": TASK, "response_model": "AgentStep", "response": step(tool="search_memory", args={"query": "a"})},
               {"contains": "(token_budget)", "response_model": "text", "response": "Alice, as far as I got."}]
    out, memory = run(tmp_path, entries, limits=Limits(max_tokens=500), tokens_used=lambda: next(spent))
    assert (out.iterations, out.stop_reason, out.forced_final) == (2, "token_budget", True)
    assert out.answer == "Alice, as far as I got."


def test_the_wall_budget_stops_the_loop(tmp_path):
    times = iter([0.0, 0.0, 31.0, 31.0])
    entries = [{"contains": TASK, "response_model": "AgentStep", "response": step(tool="search_memory", args={"query": "a"})},
               {"contains": "(wall_budget)", "response_model": "text", "response": "out of time"}]
    out, _ = run(tmp_path, entries, limits=Limits(max_seconds=30), clock=lambda: next(times))
    assert (out.iterations, out.stop_reason, out.answer) == (1, "wall_budget", "out of time")


def test_an_identical_repeated_call_is_refused_and_not_run_again(tmp_path):
    same = step(tool="search_memory", args={"top_k": 2, "query": "ceo"})
    entries = [{"contains": "identical call already made", "response_model": "AgentStep", "response": step(final="Alice")},
               {"contains": "[1] call:", "response_model": "AgentStep",
                "response": step(tool="search_memory", args={"query": "ceo", "top_k": 2})},
               {"contains": TASK, "response_model": "AgentStep", "response": same}]
    out, memory = run(tmp_path, entries)
    assert len(memory.searches) == 1 and out.answer == "Alice"
    assert out.steps[1]["result"].startswith("ERROR: identical call already made at step 1")


def test_a_step_with_neither_answer_nor_call_ends_the_loop_with_a_forced_answer(tmp_path):
    entries = [{"contains": TASK, "response_model": "AgentStep", "response": step("hmm")},
               {"contains": "(no_action)", "response_model": "text", "response": "I do not know."}]
    out, _ = run(tmp_path, entries)
    assert (out.stop_reason, out.forced_final, out.answer) == ("no_action", True, "I do not know.")


def test_opening_a_skill_records_a_skill_run(tmp_path):
    skill = Skill("triage", "triage a ticket", "1. search\n2. answer", ("search_memory",))
    entries = [{"contains": "[1] result: # Skill triage", "response_model": "AgentStep", "response": step(final="done " * 200)},
               {"contains": TASK, "response_model": "AgentStep", "response": step(tool="load_skill", args={"name": "triage"})}]
    out, _ = run(tmp_path, entries, skills=[skill])
    [record] = out.skill_runs
    assert record.skill == "triage" and record.task == TASK and len(record.result_summary) == 500
    assert record.tool_trace[0]["tool"] == "load_skill" and record.score is None and record.effective_score == 0.5


# --- dispatch ------------------------------------------------------------------------------

def test_a_tool_outside_the_scope_is_an_error_and_nothing_runs():
    memory = FakeMemory()
    only_search = dispatcher(memory, tools=[t for t in BUILTIN_TOOLS if t.name == "search_memory"])
    assert only_search("remember_note", {"text": "x"}).startswith("ERROR: tool 'remember_note' is not available")
    assert memory.notes == []


def test_a_write_tool_without_the_write_grant_is_an_error_and_nothing_is_written():
    memory = FakeMemory()
    result = dispatcher(memory, grants=("read",))("remember_note", {"text": "x"})
    assert result == "ERROR: tool 'remember_note' needs 'write' on dataset 'kb', which user 'alice' does not have"
    assert memory.notes == []
    assert dispatcher(memory, grants=("read", "write"))("remember_note", {"text": "x"}) == "noted"


def test_a_stored_spec_weaker_than_its_handler_still_needs_the_handlers_permission():
    # A spec stored (before define_tool refused it) as `read` on the write built-in.
    jot = ToolSpec("jot", "jot a note", "builtin:remember_note", {"text": "the note"}, ("text",), "read")
    memory = FakeMemory()
    result = dispatcher(memory, grants=("read",), tools=[jot])("jot", {"text": "x"})
    assert result == "ERROR: tool 'jot' needs 'write' on dataset 'kb', which user 'alice' does not have"
    assert memory.notes == []
    # A spec may ask for more than its handler: the stronger one is checked.
    wipe = ToolSpec("wipe", "a note only owners may add", "builtin:remember_note", {"text": "t"}, ("text",), "share")
    assert "needs 'share'" in dispatcher(memory, grants=("read", "write"), tools=[wipe])("wipe", {"text": "x"})
    assert memory.notes == []
    assert builtin_registry().effective(jot).permission == "write"
    assert builtin_registry().effective(wipe).permission == "share"


def test_every_built_in_handler_declares_its_least_permission():
    registry = builtin_registry()
    assert {t.handler: registry.minimum(t.handler) for t in BUILTIN_TOOLS} == {
        "builtin:search_memory": "read", "builtin:load_skill": "read", "builtin:remember_note": "write"}
    assert all(registry.minimum(t.handler) == t.permission for t in BUILTIN_TOOLS)
    assert registry.minimum("os:system") is None
    with pytest.raises(ValueError, match="unknown permission 'admin'"):
        registry.register("host:x", lambda ctx, args: "", "admin")


def test_a_downstream_refusal_of_a_note_is_an_error_result_never_queued():
    class Refusing(FakeMemory):
        def remember(self, text):
            raise ToolInvocationError("the note was not stored: user 'alice' has no write grant on dataset 'kb'")

    memory = Refusing()
    result = dispatcher(memory, grants=("read", "write"))("remember_note", {"text": "x"})
    assert result == ("ERROR: tool 'remember_note' failed: the note was not stored: "
                      "user 'alice' has no write grant on dataset 'kb'")
    assert "queued" not in result


def test_a_handler_path_stored_in_data_is_refused():
    memory = FakeMemory()
    stored = ToolSpec("shell", "runs anything", "os:system", {"cmd": "a command"}, ("cmd",))
    result = dispatcher(memory, tools=[stored])("shell", {"cmd": "touch /tmp/pwned"})
    assert result == "ERROR: tool 'shell' has no allow-listed handler ('os:system' is refused)"


def test_a_host_registered_handler_runs_and_its_output_is_cut():
    registry = builtin_registry()
    registry.register("host:echo", lambda ctx, args: args["text"] * 3)
    echo = ToolSpec("echo", "echo", "host:echo", {"text": "what"}, ("text",))
    out = dispatcher(FakeMemory(), tools=[echo], registry=registry)("echo", {"text": "x" * 5000})
    assert len(out) == MAX_TOOL_OUTPUT + len("\n... [truncated]") and out.endswith("\n... [truncated]")


def test_arguments_are_checked_before_the_handler_runs():
    memory = FakeMemory()
    d = dispatcher(memory)
    assert "unknown ['dataset']" in d("search_memory", {"query": "x", "dataset": "someone-elses"})
    assert "missing ['query']" in d("search_memory", {})
    assert d("search_memory", {"query": "x", "top_k": 500}).startswith("ERROR: tool 'search_memory' failed: top_k")
    assert memory.searches == []


def test_exposed_tools_are_the_intersection_of_available_caller_filter_and_skill_tools():
    names = lambda tools: sorted(tools)  # noqa: E731
    assert names(exposed_tools(BUILTIN_TOOLS, None, None)) == ["load_skill", "remember_note", "search_memory"]
    assert names(exposed_tools(BUILTIN_TOOLS, ["search_memory", "load_skill"], None)) == ["load_skill", "search_memory"]
    assert names(exposed_tools(BUILTIN_TOOLS, None, ["search_memory"])) == ["load_skill", "search_memory"]
    assert names(exposed_tools(BUILTIN_TOOLS, ["remember_note"], ["search_memory"])) == []


# --- skills --------------------------------------------------------------------------------

def test_a_long_skill_is_read_in_pages_and_nothing_is_lost():
    body = "".join(f"step {i:05d}\n" for i in range(2800))  # 30,800 chars
    skill = Skill("big", "a long procedure", body)
    pages = [skill_page(skill, n) for n in range(1, 6)]
    assert "call load_skill with page=2" in pages[0] and "(page 5 of 5)" in pages[4]
    assert all(len(p) < MAX_TOOL_OUTPUT for p in pages)  # the tool-output cut never bites a page
    joined = "".join(p.split("\n", 1)[1].split("\n[page ")[0] for p in pages)
    assert joined == body
    with pytest.raises(ValueError, match="pages 1..5, not 6"):
        skill_page(skill, 6)


def test_improvement_takes_failed_or_low_runs_newest_first_at_most_five():
    t = lambda d: datetime(2026, 1, d, tzinfo=UTC)  # noqa: E731
    runs = [SkillRun("s", f"t{d}", "", score=s, error=e, finished_at=t(d))
            for d, s, e in [(1, 0.1, None), (2, 0.9, None), (3, None, "boom"), (4, 0.4, None),
                            (5, None, None), (6, 0.2, None), (7, 0.3, None), (8, 0.0, None)]]
    assert [r.task for r in improvement_candidates(runs)] == ["t8", "t7", "t6", "t4", "t3"]


def test_applying_a_proposal_needs_the_matching_skill_and_keeps_nothing_else():
    skill = Skill("triage", "d", "old", ("search_memory",))
    proposal = {"id": "p1", "skill": "triage", "status": "proposed", "new_procedure": "new"}
    assert apply_proposal(skill, proposal) == Skill("triage", "d", "new", ("search_memory",))
    with pytest.raises(ValueError, match="is for skill 'triage', not 'other'"):
        apply_proposal(Skill("other", "d", "old"), proposal)
    with pytest.raises(ValueError, match="is applied, not proposed"):
        apply_proposal(skill, {**proposal, "status": "applied"})


def test_usage_of_the_loop_is_counted_by_the_gateway(tmp_path):
    with usage.usage_scope() as spent:
        run(tmp_path, [{"contains": TASK, "response_model": "AgentStep", "response": step(final="Alice")}])
    assert spent.calls == 1 and spent.prompt_tokens > 0
