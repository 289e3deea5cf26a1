"""remember, status, retry, forget, share and the dataset-wide maintenance requests: their
requests and results."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from engram.models.payloads.base import NAME, Payload


class Turn(Payload):
    """One turn of a conversation: who said what, and when if it differs from the session's time."""

    speaker: str = Field(min_length=1, max_length=100, description="a name of 1-3 words, no ':'")
    text: str = Field(min_length=1, max_length=100_000)
    at: datetime | None = None
    id: str | None = Field(default=None, max_length=60, pattern=r"^[^\s\[\]]+$")


class RememberItem(Payload):
    """One piece of content: text, base64 bytes of a file (pdf, csv, json, md, txt...), or the
    turns of a conversation session (`turns` with the session's `started_at`)."""

    text: str | None = None
    content_b64: str | None = None
    turns: list[Turn] | None = Field(default=None, min_length=1, max_length=10_000)
    started_at: datetime | None = Field(default=None, description="when the conversation session began")
    name: str | None = Field(default=None, max_length=500, description="file name; guides classification")
    mime: str | None = Field(default=None, max_length=120)
    source: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _one_content(self) -> RememberItem:
        if sum(v is not None for v in (self.text, self.content_b64, self.turns)) != 1:
            raise ValueError("give exactly one of 'text', 'content_b64' or 'turns'")
        if self.started_at is not None and self.turns is None:
            raise ValueError("'started_at' dates a conversation: give it with 'turns'")
        return self


class CognifyOptions(Payload):
    contradiction_check: bool = False
    # {"ceo_of": "target"} or ["has_ceo"] (a list means "source"); see SPEC 7.2
    functional_relationships: dict[str, Literal["source", "target"]] | list[str] | None = None


class RememberRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    content: str | None = Field(default=None, description="shorthand for items=[{'text': content}]")
    items: list[RememberItem] = Field(default_factory=list, max_length=1000)
    create_dataset: bool = Field(default=False, description="create the dataset for `user` if missing")
    node_sets: list[str] = Field(default_factory=list, max_length=20)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    options: CognifyOptions = Field(default_factory=CognifyOptions)
    # A session turn (SPEC 6): stored as a session entry, answered with "session_stored".
    session_id: str | None = Field(default=None, pattern=NAME)
    question: str | None = Field(default=None, max_length=100_000)
    answer: str | None = Field(default=None, max_length=100_000)
    context: str | None = Field(default=None, max_length=100_000)
    source_chunk_ids: list[uuid.UUID] = Field(default_factory=list, max_length=1000)
    source_edge_ids: list[uuid.UUID] = Field(default_factory=list, max_length=1000)
    at: datetime | None = Field(default=None, description="when the session turn was said (default: now)")

    @model_validator(mode="after")
    def _has_content(self) -> RememberRequest:
        if self.session_id is not None or any(v is not None for v in (self.question, self.answer, self.context,
                                                                        self.at)):
            return _session_turn(self)
        if self.content is not None:
            self.items = [RememberItem(text=self.content), *self.items]
            self.content = None
        if not self.items:
            raise ValueError("nothing to remember: give 'content' or at least one item")
        return self


def _session_turn(req: RememberRequest) -> RememberRequest:
    if req.session_id is None:
        raise ValueError("question/answer/context/at form a session turn: give a session_id too")
    if req.content is not None or req.items:
        raise ValueError("a session turn takes question/answer/context, not content or items")
    if not ((req.question or "").strip() or (req.answer or "").strip()):
        raise ValueError("a session turn needs a non-blank question or answer")
    return req


class RunRef(BaseModel):
    run_id: uuid.UUID
    data_item_id: uuid.UUID
    name: str | None = None
    duplicate: bool = False
    status: str


class RememberResult(BaseModel):
    status: Literal["accepted"]
    dataset: str
    runs: list[RunRef]
    # Back-pressure: set only when more than ENGRAM_ACCEPT_BACKLOG_BOUND runs were open (fleet-wide).
    queued_ahead: int | None = Field(default=None, description="open runs ahead of this accept")
    eta_s: float | None = Field(default=None, description="seconds until these runs are done at the recent rate")


class StatusRequest(Payload):
    run_id: uuid.UUID | None = None
    dataset: str | None = Field(default=None, pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    limit: int = Field(default=100, ge=1, le=10000)

    @model_validator(mode="after")
    def _one(self) -> StatusRequest:
        if (self.run_id is None) == (self.dataset is None):
            raise ValueError("give exactly one of 'run_id' or 'dataset'")
        return self


class StageStatus(BaseModel):
    stage: str
    status: str
    attempts: int
    error: str | None = None
    reason: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None


class RunStatus(BaseModel):
    run_id: uuid.UUID
    pipeline: str
    status: str
    error: str | None = None
    data_item_id: uuid.UUID | None = None
    attempts: int = 0
    llm_calls: int = 0
    tokens: int = 0
    created_at: datetime | None = None
    finished_at: datetime | None = None
    stages: list[StageStatus] = Field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status in ("completed", "partial", "failed", "forgotten")


class StatusResult(BaseModel):
    runs: list[RunStatus]
    queues: dict[str, int] | None = Field(default=None, description="messages waiting per queue (dataset status)")


class RetryRequest(Payload):
    run_id: uuid.UUID
    user: str = Field(default="default", pattern=NAME)


class RetryResult(BaseModel):
    """engram.cognify: the retried run and the stages its chain runs again (none: it was done)."""

    run_id: uuid.UUID
    status: Literal["completed", "pending"]
    stages: list[str] = Field(default_factory=list)


class ForgetRequest(Payload):
    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    data_item_id: uuid.UUID | None = Field(default=None, description="one item; omit to forget the whole dataset")


class ForgetResult(BaseModel):
    items: int
    chunks: int
    edges: int
    entities: int
    session_entries: int = 0
    runs: int = Field(default=0, description="runs marked forgotten (their outputs and inputs erased)")


Permission = Literal["read", "write", "delete", "share"]


class ShareRequest(Payload):
    """engram.share / engram.unshare: grant or revoke a user's permissions on a dataset.

    The caller needs the `share` grant (the owner holds it; the owner may pass it on). The
    owner's own grants can never be revoked."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    grantee: str = Field(pattern=NAME)
    permissions: list[Permission] = Field(default_factory=lambda: ["read"], min_length=1, max_length=4)


class ShareResult(BaseModel):
    status: Literal["shared", "unshared"]
    dataset: str
    grantee: str
    permissions: list[str] = Field(description="the grantee's grants on the dataset now")


class DatasetsRequest(Payload):
    """engram.datasets: the datasets the user holds a grant on."""

    user: str = Field(default="default", pattern=NAME)


class DatasetInfo(BaseModel):
    name: str
    owner: str
    own: bool = Field(description="the caller owns it (else it is shared with them)")
    permissions: list[str] = Field(description="the caller's grants")
    grants: dict[str, list[str]] | None = Field(
        default=None, description="everyone's grants by user (role:<name> for a role); only with the share grant")
    counts: dict[str, int] = Field(description="data_items, documents, chunks, entities, entity_types, edges, "
                                              "summaries, objects (captured), facts (edges that state a fact)")
    runs: dict[str, int] = Field(description="the dataset's runs by status")
    created_at: datetime


class DatasetsResult(BaseModel):
    datasets: list[DatasetInfo]


class ContradictionCheckRequest(Payload):
    """engram.maintenance.check_contradictions: SPEC 7.1 over a whole dataset."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)


class SupersedeRequest(Payload):
    """engram.maintenance.supersede: SPEC 7.2 over a whole dataset (e.g. after changing the
    functional relationships)."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    # {"ceo_of": "target"} or ["has_ceo"] (a list means "source")
    functional_relationships: dict[str, Literal["source", "target"]] | list[str]

    @field_validator("functional_relationships")
    @classmethod
    def _some(cls, value):
        if not value:
            raise ValueError("name at least one functional relationship")
        return value


class MaintenanceAccepted(BaseModel):
    status: Literal["accepted"]
    dataset: str
    stage: str
    run_id: uuid.UUID
