"""The producer contract of skills, stored tools and agent memory (SPEC 8, 8b)."""

from __future__ import annotations

import re
import uuid

from typing import Literal

from pydantic import BaseModel, Field

from engram.models.payloads import NAME, Payload

TOOL_NAME = r"^[A-Za-z][A-Za-z0-9_]{0,99}$"
_IMPORT_PATH = re.compile(r"^[\w.]+:[\w.]+$")


class SkillDefineRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    name: str = Field(pattern=NAME)
    description: str = Field(min_length=1, max_length=2000)
    procedure: str = Field(min_length=1, max_length=200_000)
    tools: list[str] = Field(default_factory=list, max_length=50)


class ToolDefineRequest(Payload):
    """A tool spec stored as data. `handler` names an allow-listed handler key of the workers."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    name: str = Field(pattern=TOOL_NAME)
    description: str = Field(min_length=1, max_length=2000)
    handler: str = Field(min_length=1, max_length=300)
    arguments: dict[str, str] = Field(default_factory=dict, max_length=30)
    required: list[str] = Field(default_factory=list, max_length=30)
    permission: str | None = Field(default=None, pattern=r"^(read|write|delete|share)$",
                                   description="the grant a call needs; never weaker than the handler's own "
                                               "(none: the handler's, or read for a handler the workers lack)")


class SkillListRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    skill: str | None = Field(default=None, pattern=NAME)
    limit: int = Field(default=20, ge=1, le=500)


class SkillFeedbackRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    run_id: uuid.UUID
    score: float = Field(ge=0.0, le=1.0)


class SkillImproveRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    skill: str = Field(pattern=NAME)


class SkillApplyRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    skill: str = Field(pattern=NAME)
    proposal_id: uuid.UUID


class AgentMemoryRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    session_id: str | None = Field(default=None, pattern=NAME)
    query: str = Field(default="", max_length=10_000)
    top_k: int = Field(default=5, ge=0, le=50)
    last_traces: int = Field(default=3, ge=0, le=50)


class AgentTraceRequest(Payload):
    trace_id: uuid.UUID
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    session_id: str | None = Field(default=None, pattern=NAME)
    function: str = Field(min_length=1, max_length=300)
    inputs: str = Field(max_length=20_000)
    result: str | None = Field(default=None, max_length=20_000)
    error: str | None = Field(default=None, max_length=20_000)
    memory: str | None = Field(default=None, max_length=20_000)  # the memory the call was shown


def refuse_import_paths(handler: str, allowed: set[str]) -> str | None:
    """Why a stored handler will not run, or None. Only keys the workers allow-list ever run."""
    if handler in allowed:
        return None
    if _IMPORT_PATH.match(handler):
        return f"handler {handler!r} is an import path that the workers do not allow-list (ENGRAM_AGENT_TOOLS)"
    return f"handler {handler!r} is not an allow-listed handler key"



# ------------------------------------------------------------------ results


class SkillStored(BaseModel):
    status: Literal["stored"] = "stored"
    skill_id: uuid.UUID
    name: str
    earlier_procedures: int


class ToolStored(BaseModel):
    status: Literal["stored"] = "stored"
    name: str
    permission: str
    runnable: bool
    warning: str | None = None


class SkillsListed(BaseModel):
    dataset: str
    skills: list[dict]
    tools: list[dict]
    runs: list[dict]
    proposals: list[dict]


class RunScored(BaseModel):
    status: Literal["scored"] = "scored"
    run_id: uuid.UUID
    score: float


class SkillImprovement(BaseModel):
    """engram.skills.improve: a proposal, or why there is none (only the fields of its case are set)."""

    status: Literal["disabled", "nothing_to_improve", "llm_required", "proposed"]
    reason: str | None = None
    proposal_id: uuid.UUID | None = None
    skill: str | None = None
    confidence: float | None = None
    rationale: str | None = None
    runs: list[uuid.UUID] | None = None


class ProposalApplied(BaseModel):
    status: Literal["applied"] = "applied"
    skill: str
    proposal_id: uuid.UUID
    earlier_procedures: int


class AgentMemory(BaseModel):
    memory: str
    facts: int
    traces: int


class TraceStored(BaseModel):
    status: Literal["stored", "duplicate"]
    trace_id: uuid.UUID
