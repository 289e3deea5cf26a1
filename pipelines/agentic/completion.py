"""AGENTIC_COMPLETION as a recall (SPEC 8): memory, skills and tools in, an answer with the
agent's steps out. The caller has authorised exactly one dataset for reading and hands in the
grants the user holds on it; the tools act on that dataset only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engram.models.payloads import RecallItem, RecallRequest, RecallResult
from engram.pipelines.agentic.builtins import BUILTIN_TOOLS
from engram.pipelines.agentic.loop import AgentOutcome, AgentPorts, Limits, run_agent
from engram.pipelines.agentic.skills import Skill
from engram.pipelines.agentic.tools import Dispatcher, HandlerRegistry, ToolContext, ToolSpec, exposed_tools
from engram.pipelines.recall.completion import answer_item, render_context
from engram.pipelines.recall.registry import named

AGENTIC = named("agentic")
NO_LLM_NOTE = (f"{AGENTIC} needs an LLM (none configured): the items are the retrieved memory; "
               "set ENGRAM_LLM_MODEL to run the agent")


class AgenticRequestError(ValueError):
    """The request names skills or tools this dataset does not have."""


@dataclass
class AgenticPorts:
    gateway: Any
    memory: Callable[[str, int], list[RecallItem]]  # graph context for "# Memory"
    search: Callable[[str, str, int], str]  # the search_memory tool's lookup, rendered
    remember: Callable[[str], str]  # the remember_note tool
    registry: HandlerRegistry
    skills: Sequence[Skill] = ()
    tools: Sequence[ToolSpec] = ()  # stored and host-registered specs, besides the built-ins
    grants: frozenset[str] = frozenset({"read"})
    limits: Limits = field(default_factory=Limits)
    tokens_used: Callable[[], int] = lambda: 0


class _ToolPorts:
    def __init__(self, ports: AgenticPorts, skills: Sequence[Skill]):
        self.recall, self.remember = ports.search, ports.remember
        self.skills = {s.name: s for s in skills}


def _select(names: Sequence[str] | None, available: dict[str, Any], what: str) -> list:
    if names is None:
        return list(available.values())
    unknown = [n for n in names if n not in available]
    if unknown:
        raise AgenticRequestError(f"unknown {what} {unknown}; this dataset has {sorted(available)}")
    return [available[n] for n in dict.fromkeys(names)]


def agentic_recall(req: RecallRequest, dataset: str, ports: AgenticPorts) -> tuple[RecallResult, AgentOutcome | None]:
    skills = _select(req.skills, {s.name: s for s in ports.skills}, "skills")
    catalogue = {t.name: ports.registry.effective(t)  # "# Available tools" shows what a call needs
                 for t in [*ports.tools, *BUILTIN_TOOLS]}  # built-ins win a name
    if req.tools is not None:
        _select(req.tools, catalogue, "tools")
    declared = {t for s in skills for t in s.tools} if skills else None
    exposed = exposed_tools(catalogue.values(), req.tools, declared)
    memory_items = ports.memory(req.question, req.top_k)
    base = dict(question=req.question, search_type=AGENTIC, datasets=[dataset], sources=["graph"])
    if not ports.gateway.generates:
        return RecallResult(**base, note=NO_LLM_NOTE, items=memory_items), None
    dispatcher = Dispatcher(exposed, ports.registry,
                            ToolContext(dataset, req.user, ports.grants, _ToolPorts(ports, skills)))
    outcome = run_agent(req.question, render_context(memory_items), skills, list(exposed.values()),
                        AgentPorts(gateway=ports.gateway, dispatch=dispatcher, tokens_used=ports.tokens_used),
                        ports.limits)
    answer = answer_item(outcome.answer, memory_items)
    answer.provenance.dataset = dataset
    note = f"agent stopped: {outcome.stop_reason} after {outcome.iterations} step(s)"
    if outcome.forced_final:
        note += "; the answer is a forced final completion"
    agent = {"stop_reason": outcome.stop_reason, "iterations": outcome.iterations,
             "forced_final": outcome.forced_final, "steps": outcome.steps,
             "tools": sorted(exposed), "skills_opened": [r.skill for r in outcome.skill_runs]}
    return RecallResult(**base, generated=True, note=note, items=[answer, *memory_items], agent=agent), outcome
