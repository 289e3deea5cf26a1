"""The producer contract: pydantic requests and results of every public task.

Task names are stable API. Producers may send plain dicts with `send_task(name, kwargs=...)`;
each task validates them here first, so a malformed payload fails at once and writes nothing.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.:@ -]{0,199}$"


def _bad_text(value) -> str | None:
    """Why a string (or any string inside a list/dict) cannot be stored in Postgres, if it can't."""
    if isinstance(value, str):
        nul = value.find("\x00")
        if nul >= 0:
            return f"contains a NUL character (\\x00) at offset {nul}"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates from a bad decoder upstream
            return f"is not valid Unicode ({exc.reason} at offset {exc.start})"
    elif isinstance(value, (list, tuple, set)):
        return next((r for r in map(_bad_text, value) if r), None)
    elif isinstance(value, dict):
        return next((r for r in map(_bad_text, [*value.keys(), *value.values()]) if r), None)
    return None


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _storable_text(cls, value):
        # Every string may reach a text column: refuse what Postgres cannot store, naming the field,
        # instead of failing mid-transaction with a driver error.
        problem = _bad_text(value)
        if problem:
            raise ValueError(problem)
        return value


class RememberItem(Payload):
    """One piece of content: text, or base64 bytes of a file (pdf, csv, json, md, txt...)."""

    text: str | None = None
    content_b64: str | None = None
    name: str | None = Field(default=None, max_length=500, description="file name; guides classification")
    mime: str | None = Field(default=None, max_length=120)
    source: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _one_content(self) -> RememberItem:
        if (self.text is None) == (self.content_b64 is None):
            raise ValueError("give exactly one of 'text' or 'content_b64'")
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

    @model_validator(mode="after")
    def _has_content(self) -> RememberRequest:
        if self.session_id is not None or any(v is not None for v in (self.question, self.answer, self.context)):
            return _session_turn(self)
        if self.content is not None:
            self.items = [RememberItem(text=self.content), *self.items]
            self.content = None
        if not self.items:
            raise ValueError("nothing to remember: give 'content' or at least one item")
        return self


def _session_turn(req: RememberRequest) -> RememberRequest:
    if req.session_id is None:
        raise ValueError("question/answer/context form a session turn: give a session_id too")
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
        return self.status in ("completed", "failed", "forgotten")


class StatusResult(BaseModel):
    runs: list[RunStatus]
    queues: dict[str, int] | None = Field(default=None, description="messages waiting per queue (dataset status)")


class RetryRequest(Payload):
    run_id: uuid.UUID
    user: str = Field(default="default", pattern=NAME)


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


class RecallRequest(Payload):
    question: str = Field(min_length=1, max_length=10000)
    user: str = Field(default="default", pattern=NAME)
    datasets: list[str] = Field(default_factory=list, max_length=50)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    search_type: str | None = None
    top_k: int = Field(default=10, ge=1, le=200)
    as_of: datetime | None = None
    include_history: bool = False
    # Only chunks of data items in one of these node sets (chunk, summary and hybrid search types).
    node_sets: list[str] = Field(default_factory=list, max_length=20)
    # Captured objects only (search type CAPTURES, chosen when any is given): SPEC §9.
    object_types: list[str] = Field(default_factory=list, max_length=8)
    project: str | None = Field(default=None, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=50)

    @model_validator(mode="after")
    def _capture_filters(self) -> RecallRequest:
        from engram.pipelines.capture.vocabulary import OBJECT_TYPES

        self.object_types = [t.strip().lower() for t in self.object_types]
        self.tags = [t.strip().lower() for t in self.tags if t.strip()]
        unknown = [t for t in self.object_types if t not in OBJECT_TYPES]
        if unknown:
            raise ValueError(f"unknown object type(s) {', '.join(unknown)}; expected {', '.join(OBJECT_TYPES)}")
        if self.object_types or self.project or self.tags:
            if self.search_type not in (None, "CAPTURES"):
                raise ValueError("object_types / project / tags filter captured objects: use search_type CAPTURES")
            self.search_type = "CAPTURES"
        return self

    @property
    def capture_filter(self) -> dict:
        return {"types": self.object_types, "project": self.project or None, "tags": self.tags}

    # AGENTIC_COMPLETION only (SPEC 8): which of the dataset's skills and tools to offer.
    skills: list[str] | None = Field(default=None, max_length=50)
    tools: list[str] | None = Field(default=None, max_length=50)

    @model_validator(mode="after")
    def _agentic_only(self) -> RecallRequest:
        agentic = self.search_type == "AGENTIC_COMPLETION"
        if not agentic and (self.skills is not None or self.tools is not None):
            raise ValueError("skills and tools go with search_type AGENTIC_COMPLETION only")
        if agentic and len(self.datasets) != 1:
            raise ValueError("AGENTIC_COMPLETION needs exactly one dataset in 'datasets'")
        return self

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is blank")
        return value

    @field_validator("search_type")
    @classmethod
    def _known_type(cls, value: str | None) -> str | None:
        from engram.models.search import SearchType

        if value is None or not value.strip():
            return None
        name = value.strip().upper()
        if name not in SearchType.__members__:
            raise ValueError(f"unknown search type {value!r}; expected one of {', '.join(SearchType.__members__)}")
        return name

    @field_validator("as_of")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        # A naive timestamp means UTC, never the server's local time.
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class LessonProvenance(BaseModel):
    lesson_id: uuid.UUID
    session_id: str
    entry_ids: list[str] = Field(default_factory=list)


class Provenance(BaseModel):
    dataset: str | None = None
    document_id: uuid.UUID | None = None
    data_item_id: uuid.UUID | None = None
    title: str | None = None
    chunk_ids: list[uuid.UUID] = Field(default_factory=list)
    edge_ids: list[uuid.UUID] = Field(default_factory=list)
    lesson: LessonProvenance | None = None  # the item is a distilled session lesson


class CaptureEdge(BaseModel):
    predicate: str
    direction: Literal["out", "in"]
    other_id: uuid.UUID
    other_name: str | None = None
    origin: str | None = None  # entity | llm | reasoner
    confidence: float | None = None
    rule: str | None = None  # reasoner edges: the rule that derived it


class CapturedObject(BaseModel):
    """A captured knowledge object as recall returns it: its type and its edges."""

    id: uuid.UUID
    type: str
    title: str
    project: str = ""
    tags: list[str] = Field(default_factory=list)
    summary: str | None = None
    confidence: float = 0.0
    tier: str = "archive"
    stage: str = "ingested"
    edges: list[CaptureEdge] = Field(default_factory=list)


class RecallItem(BaseModel):
    kind: Literal["chunk", "summary", "triplet", "answer", "session", "capture"]
    text: str
    score: float
    provenance: Provenance = Field(default_factory=Provenance)
    superseded: bool = False
    conflicts: list[dict] = Field(default_factory=list)
    superseded_facts: list[dict] = Field(
        default_factory=list,
        description="passages: the facts they state that are no longer current ({fact, by, since})")
    capture: CapturedObject | None = None  # set when the item is (the text of) a captured object
    via: list[str] = Field(default_factory=list, description="a passage reached through the graph: the facts linking it")
    passage: str | None = Field(default=None, description="a fact: the text of the passage it was read from")


class RecallResult(BaseModel):
    question: str
    search_type: str
    routed: bool = False
    route_score: float | None = None
    generated: bool = Field(default=False, description="False: no LLM, items are retrieved context")
    note: str | None = None
    items: list[RecallItem]
    datasets: list[str] = Field(default_factory=list, description="the datasets searched, all read-authorised")
    sources: list[str] = Field(default_factory=list, description="lanes that contributed: session, graph")
    fallback_from: str | None = Field(default=None, description="auto-routed type that came back empty")
    agent: dict | None = Field(default=None, description="AGENTIC_COMPLETION: stop reason, steps, tools, skills")


# ------------------------------------------------------------------ sessions and improve (SPEC 6)


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
        import re

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


# ------------------------------------------------------------------ capture lane (SPEC 9)


class CaptureRequest(Payload):
    """engram.capture: admit one typed knowledge object, then normalize → link → enrich → reason.

    entities: [{"name": "Redis", "type": "technology"}, ...] (or that list as JSON text);
    given, even empty, it replaces extraction. properties: {"key": "value"} (or JSON text);
    a template's own properties win over them. template_fields fill the template's sections.
    """

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    title: str = Field(min_length=1, max_length=500)
    content: str = Field(default="", max_length=200_000)  # one object is one chunk (and one tsvector)
    type: str | None = Field(default=None, description="decision, lesson, fix, session, research, source, "
                                                           "synthesis or idea; none = classified")
    project: str = Field(default="", max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=50)
    template: str | None = None
    template_fields: dict[str, str] = Field(default_factory=dict)
    summary: str | None = Field(default=None, max_length=10_000)
    entities: list | str | None = None
    properties: dict | str | None = None
    run_pipeline: bool = True
    create_dataset: bool = Field(default=False, description="create the dataset for `user` if missing")
    captured_by: str = Field(default="", max_length=64)

    @model_validator(mode="after")
    def _drafts(self) -> CaptureRequest:
        self.draft()  # template fields, entity and property JSON: a clear error before anything is written
        return self

    def draft(self):
        from engram.pipelines.capture.admit import draft_object

        return draft_object(title=self.title, content=self.content, type=self.type, project=self.project,
                            tags=self.tags, template=self.template, template_fields=self.template_fields,
                            summary=self.summary, entities=self.entities, properties=self.properties)


class CaptureAccepted(BaseModel):
    status: Literal["accepted"]
    dataset: str
    object_id: uuid.UUID
    type: str
    run_id: uuid.UUID | None = None
    duplicate: bool = False
    stages: list[str] = Field(default_factory=list, description="stages enqueued")


class CaptureReprocessRequest(Payload):
    """engram.capture.reprocess: resume an object's pipeline at its first failed stage with the
    original request (caller entities, properties, template); a complete object reruns it all."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    object_id: uuid.UUID


class CaptureStatus(BaseModel):
    """Where a capture stands: complete when no stage failed, partial when one did."""

    object_id: uuid.UUID
    run_id: uuid.UUID | None = None
    status: Literal["pending", "complete", "partial", "ingested", "forgotten"]
    stages: list[StageStatus] = Field(default_factory=list)

    @classmethod
    def of(cls, object_id: uuid.UUID, run: RunStatus | None) -> CaptureStatus:
        if run is None:
            return cls(object_id=object_id, status="ingested")
        if not run.done:
            status = "pending"
        elif run.status == "forgotten":
            status = "forgotten"
        else:
            status = "partial" if any(s.status == "failed" for s in run.stages) else "complete"
        return cls(object_id=object_id, run_id=run.run_id, status=status, stages=run.stages)
