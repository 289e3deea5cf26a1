"""recall: its request (search types, filters, sessions) and its result items with provenance."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from engram.models.payloads.base import NAME, Payload


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
        from engram.pipelines.recall.registry import named

        self.object_types = [t.strip().lower() for t in self.object_types]
        self.tags = [t.strip().lower() for t in self.tags if t.strip()]
        unknown = [t for t in self.object_types if t not in OBJECT_TYPES]
        if unknown:
            raise ValueError(f"unknown object type(s) {', '.join(unknown)}; expected {', '.join(OBJECT_TYPES)}")
        if self.object_types or self.project or self.tags:
            captures = named("capture_filters")
            if self.search_type not in (None, captures):
                raise ValueError(f"object_types / project / tags filter captured objects: use search_type {captures}")
            self.search_type = captures
        return self

    @property
    def capture_filter(self) -> dict:
        return {"types": self.object_types, "project": self.project or None, "tags": self.tags}

    # The agentic search type only (SPEC 8): which of the dataset's skills and tools to offer.
    skills: list[str] | None = Field(default=None, max_length=50)
    tools: list[str] | None = Field(default=None, max_length=50)

    @model_validator(mode="after")
    def _agentic_only(self) -> RecallRequest:
        from engram.pipelines.recall.registry import is_agentic, named

        agentic = is_agentic(self.search_type)
        if not agentic and (self.skills is not None or self.tools is not None):
            raise ValueError(f"skills and tools go with search_type {named('agentic')} only")
        if agentic and len(self.datasets) != 1:
            raise ValueError(f"{named('agentic')} needs exactly one dataset in 'datasets'")
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
    # A conversation's chunk: when its session took place and who speaks in it.
    occurred_at: datetime | None = None
    speakers: list[str] | None = None


class CaptureEdge(BaseModel):
    predicate: str
    direction: Literal["out", "in"]
    other_id: uuid.UUID
    other_name: str | None = None
    origin: str | None = None  # entity | llm | reasoner | caller
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
