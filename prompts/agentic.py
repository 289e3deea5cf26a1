"""Agentic completion prompts (SPEC 8): the tool loop's step, the forced final answer and the
skill-improvement draft, each a function returning litellm messages next to the response
model its answer must match. The task text sits verbatim in the user message so replay
cassettes can match on it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

Messages = list[dict[str, str]]


class ToolCall(BaseModel):
    tool_name: str = Field(max_length=200)
    arguments: dict[str, Any] = Field(default_factory=dict)


class AgentStep(BaseModel):
    """One turn of the loop: a final answer wins; else the tool call runs; else the loop ends."""

    thought: str = ""
    tool_call: ToolCall | None = None
    final_answer: str | None = None


class DraftedProcedure(BaseModel):
    """A skill's procedure rewritten from its failed or low-scoring runs."""

    proposed_procedure: str = Field(min_length=1)
    rationale: str = ""
    confidence: float = Field(ge=0.0, le=1.0)


_LOOP_RULES = """\
You are an agent answering a task from an AI agent's memory, with tools.
Each turn, reply with one JSON object AgentStep:
- thought: one or two sentences on what you do next and why.
- tool_call: {"tool_name": ..., "arguments": {...}} to run one of the available tools, or null.
- final_answer: your answer to the task once you can give it, else null.
Rules:
- Use only the tools listed under "# Available tools", with the arguments they declare.
- Open a skill with load_skill before following it; a long skill comes in pages.
- A tool result starting with "ERROR:" means the call did not run; do not repeat an identical
  call, change it or answer.
- Answer only from memory and tool results; say you do not know when they do not hold it."""


def _sections(task: str, memory: str, skills: str, tools: str, transcript: str) -> str:
    parts = [f"# Task\n{task}", f"# Memory\n{memory or '(nothing found)'}",
             f"# Available skills\n{skills or '(none)'}", f"# Available tools\n{tools or '(none)'}"]
    if transcript:
        parts.append(f"# Steps so far\n{transcript}")
    return "\n\n".join(parts)


def agent_step_prompt(task: str, memory: str, skills: str, tools: str, transcript: str) -> Messages:
    """The next AgentStep, given everything so far."""
    return [
        {"role": "system", "content": _LOOP_RULES},
        {"role": "user", "content": _sections(task, memory, skills, tools, transcript)},
    ]


def forced_final_prompt(task: str, memory: str, transcript: str, reason: str) -> Messages:
    """One plain-text completion after the loop ended without an answer (response model "text")."""
    return [
        {"role": "system", "content": (
            "You are an agent that ran out of steps (" + reason + "). Give your best final answer to "
            "the task now, from the memory and the tool results below only. Say what is uncertain.")},
        {"role": "user", "content": _sections(task, memory, "", "", transcript) + "\n\nFinal answer:"},
    ]


def skill_improvement_prompt(skill_name: str, procedure: str, runs: str) -> Messages:
    """Draft a better procedure for a skill from its failed or low-scoring runs."""
    return [
        {"role": "system", "content": (
            "You improve an agent skill. Read its procedure and the runs that failed or scored low "
            "(task, result, tool trace, error). Write a revised procedure that would have avoided those "
            "failures, keeping what works. Give a short rationale and your confidence in [0, 1].")},
        {"role": "user", "content": f"# Skill {skill_name}\n{procedure}\n\n# Runs\n{runs}"},
    ]
