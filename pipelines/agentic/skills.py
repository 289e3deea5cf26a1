"""Skills: named procedures the agent can open, their runs, and drafted improvements (SPEC 8).

A long skill body is read in pages (load_skill with page=N) instead of being cut at 12,000
characters, so nothing of a procedure is out of the model's reach. A page fits under the
8,000-character tool-output cut, so no page is truncated either.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

SKILL_PAGE_CHARS = 7500  # + header and footer < MAX_TOOL_OUTPUT (8,000)
RESULT_SUMMARY_CHARS = 500
TRACE_OUTPUT_CHARS = 1000
UNSCORED = 0.5
LOW_SCORE = 0.5
IMPROVEMENT_RUNS = 5


class SkillError(ValueError):
    """A skill request that cannot be honoured (unknown skill, mismatched proposal)."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    procedure: str
    tools: tuple[str, ...] = ()

    def listing(self) -> str:
        return f"- {self.name}: {self.description}"


def skill_page(skill: Skill, page: int = 1, size: int = SKILL_PAGE_CHARS) -> str:
    """Page `page` (1-based) of the body, with a line saying how to read on."""
    pages = max(1, math.ceil(len(skill.procedure) / size))
    if not 1 <= page <= pages:
        raise SkillError(f"skill {skill.name!r} has pages 1..{pages}, not {page}")
    body = skill.procedure[(page - 1) * size: page * size]
    header = f"# Skill {skill.name}" + (f" (page {page} of {pages})" if pages > 1 else "")
    tail = (f"\n[page {page} of {pages}: call load_skill with page={page + 1} for the rest]"
            if page < pages else "")
    return f"{header}\n{body}{tail}"


@dataclass
class TraceEntry:
    tool: str
    arguments: dict[str, Any]
    output: str

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "output": self.output[:TRACE_OUTPUT_CHARS]}


@dataclass
class SkillRun:
    """One use of an opened skill: what was asked, what came of it, how the tools were used."""

    skill: str
    task: str
    result_summary: str
    tool_trace: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    score: float | None = None  # None: unscored, counts as UNSCORED
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def effective_score(self) -> float:
        return UNSCORED if self.score is None else self.score


def skill_run(skill: str, task: str, answer: str | None, trace: Sequence[TraceEntry], error: str | None,
              started_at: datetime, finished_at: datetime) -> SkillRun:
    return SkillRun(skill=skill, task=task, result_summary=(answer or "")[:RESULT_SUMMARY_CHARS],
                    tool_trace=[t.as_dict() for t in trace], error=error,
                    started_at=started_at, finished_at=finished_at)


def improvement_candidates(runs: Iterable[SkillRun]) -> list[SkillRun]:
    """Runs worth learning from: an error or a score below 0.5, newest first, at most 5."""
    bad = [r for r in runs if r.error or r.effective_score < LOW_SCORE]
    bad.sort(key=lambda r: r.finished_at or r.started_at or datetime.min, reverse=True)
    return bad[:IMPROVEMENT_RUNS]


def render_runs(runs: Sequence[SkillRun]) -> str:
    blocks = []
    for n, run in enumerate(runs, 1):
        trace = "; ".join(f"{t['tool']}({t['arguments']}) -> {t['output'][:200]}" for t in run.tool_trace)
        blocks.append(f"## Run {n} (score {run.effective_score:.2f})\nTask: {run.task}\n"
                      f"Result: {run.result_summary or '(none)'}\nError: {run.error or '(none)'}\n"
                      f"Tools: {trace or '(none)'}")
    return "\n\n".join(blocks)


def apply_proposal(skill: Skill, proposal: dict[str, Any]) -> Skill:
    """The skill with the proposal's procedure; the proposal must target this skill and be open."""
    if proposal.get("skill") != skill.name:
        raise SkillError(f"proposal {proposal.get('id')} is for skill {proposal.get('skill')!r}, not {skill.name!r}")
    if proposal.get("status") != "proposed":
        raise SkillError(f"proposal {proposal.get('id')} is {proposal.get('status')}, not proposed")
    return Skill(skill.name, skill.description, proposal["new_procedure"], skill.tools)
