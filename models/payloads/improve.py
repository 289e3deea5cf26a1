"""Sessions and improve (SPEC 6): stored turns, feedback, improve requests and results."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from engram.models.payloads.base import NAME, Payload
import re


class SessionStored(BaseModel):
    status: Literal["session_stored"]
    dataset: str
    session_id: str
    entry_id: uuid.UUID
    seq: int
    improve: Literal["requested", "debounced", "declined", "disabled"]
    reason: str | None = None


class FeedbackRequest(Payload):
    entry_id: uuid.UUID
    feedback: Literal["helpful", "harmful"]
    score: float | None = Field(default=None, ge=0.0, le=1.0, description="becomes the entry's confidence")
    user: str = Field(default="default", pattern=NAME)


class ImproveRequest(Payload):
    """engram.improve: explicit, never subject to admission. No session_ids = dataset stages only."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    session_ids: list[str] = Field(default_factory=list, max_length=100)
    max_llm_calls: int | None = Field(default=None, ge=0, description="budget of this run; 0 = unlimited")
    max_tokens: int | None = Field(default=None, ge=0)

    @field_validator("session_ids")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for s in value:
            if not re.match(NAME, s):
                raise ValueError(f"invalid session id {s!r}")
        return sorted(set(value))


class ImproveResult(BaseModel):
    status: Literal["started", "no_op", "busy"]
    dataset_id: uuid.UUID
    session_ids: list[str] = Field(default_factory=list)
    run_id: uuid.UUID | None = None
    claim_id: uuid.UUID | None = None
    fence: int | None = None
    rerun_requested: bool = False
    reason: str | None = None


class SessionsRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    session_id: str | None = Field(default=None, pattern=NAME)
    runs: int = Field(default=5, ge=0, le=100, description="recent improve runs per session")


class ImproveRunRequest(Payload):
    run_id: uuid.UUID
    user: str = Field(default="default", pattern=NAME)


class FeedbackRecorded(BaseModel):
    status: Literal["recorded"] = "recorded"
    entry_id: uuid.UUID
    session_id: str
    helpful_count: int
    harmful_count: int
    confidence: float | None = None


class SessionsReport(BaseModel):
    """engram.sessions: per session its entries, pending work, learning and recent improve runs."""

    dataset: str
    dataset_id: uuid.UUID
    dataset_claim: dict | None = None
    sessions: list[dict]
