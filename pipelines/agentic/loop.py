"""The bounded tool loop of AGENTIC_COMPLETION (SPEC 8), over ports.

Bounds: at most `max_iterations` steps, and (Beyond the reference) a total token budget and a
wall-clock budget checked before every model call. An identical repeated tool call is refused
with a message to the model instead of being run again. When the loop ends without an answer,
one forced final completion is made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engram.pipelines.agentic.skills import Skill, SkillRun, TraceEntry, skill_run
from engram.pipelines.agentic.tools import ToolSpec, call_key
from engram.prompts.agentic import AgentStep, agent_step_prompt, forced_final_prompt

MAX_ITERATIONS = 6


@dataclass(frozen=True)
class Limits:
    max_iterations: int = MAX_ITERATIONS
    max_tokens: int = 60_000
    max_seconds: float = 120.0


@dataclass
class AgentPorts:
    gateway: Any  # structured(messages, model) and complete(messages)
    dispatch: Callable[[str, Mapping[str, Any]], str]  # the Dispatcher
    tokens_used: Callable[[], int] = lambda: 0  # tokens spent so far by this loop's model calls
    clock: Callable[[], float] = time.monotonic
    now: Callable[[], datetime] = lambda: datetime.now(UTC)


@dataclass
class AgentOutcome:
    answer: str
    stop_reason: str  # final_answer | no_action | max_iterations | token_budget | wall_budget
    forced_final: bool
    iterations: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    trace: list[TraceEntry] = field(default_factory=list)
    skill_runs: list[SkillRun] = field(default_factory=list)


def _transcript(steps: Sequence[dict[str, Any]]) -> str:
    lines = []
    for n, step in enumerate(steps, 1):
        lines.append(f"[{n}] thought: {step['thought']}")
        if step.get("tool"):
            lines.append(f"[{n}] call: {step['tool']}({step['arguments']})")
            lines.append(f"[{n}] result: {step['result']}")
    return "\n".join(lines)


def run_agent(task: str, memory: str, skills: Sequence[Skill], tools: Sequence[ToolSpec], ports: AgentPorts,
              limits: Limits = Limits()) -> AgentOutcome:
    started, t0 = ports.now(), ports.clock()
    skill_list = "\n".join(s.listing() for s in skills)
    tool_list = "\n".join(t.render() for t in tools)
    steps: list[dict[str, Any]] = []
    trace: list[TraceEntry] = []
    opened: list[str] = []
    seen: dict[str, int] = {}
    answer, stop = None, "max_iterations"
    iterations = 0
    for _ in range(limits.max_iterations):
        if ports.tokens_used() >= limits.max_tokens:
            stop = "token_budget"
            break
        if ports.clock() - t0 >= limits.max_seconds:
            stop = "wall_budget"
            break
        iterations += 1
        step = ports.gateway.structured(
            agent_step_prompt(task, memory, skill_list, tool_list, _transcript(steps)), AgentStep)
        if step.final_answer and step.final_answer.strip():
            answer, stop = step.final_answer.strip(), "final_answer"
            steps.append({"thought": step.thought, "final_answer": answer})
            break
        if step.tool_call is None:
            stop = "no_action"
            steps.append({"thought": step.thought})
            break
        name, args = step.tool_call.tool_name, step.tool_call.arguments
        key = call_key(name, args)
        if key in seen:
            result = (f"ERROR: identical call already made at step {seen[key]}; its result is above. "
                      "Change the arguments, use another tool or give the final answer.")
        else:
            seen[key] = len(steps) + 1
            result = ports.dispatch(name, args)
            trace.append(TraceEntry(name, dict(args), result))
            if name == "load_skill" and not result.startswith("ERROR:"):
                skill = str(args.get("name", ""))
                if skill not in opened:
                    opened.append(skill)
        steps.append({"thought": step.thought, "tool": name, "arguments": args, "result": result})
    forced = answer is None
    if forced:
        answer = ports.gateway.complete(forced_final_prompt(task, memory, _transcript(steps), stop)).strip()
    finished = ports.now()
    runs = [skill_run(name, task, answer, trace, None, started, finished) for name in opened]
    return AgentOutcome(answer=answer, stop_reason=stop, forced_final=forced, iterations=iterations,
                        steps=steps, trace=trace, skill_runs=runs)
