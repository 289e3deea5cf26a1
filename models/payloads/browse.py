"""Browsing memory (issue 36): read one item, list a dataset's items, an entity's dossier and
neighbourhood, the caller's datasets, and a caller's typed link. Every request names its user:
a dataset name, an item id or an entity is not a capability (each task checks the grant)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from engram.models.payloads.base import NAME, Payload

ENTITY_REF = Field(min_length=1, max_length=500, description="an entity's (or captured object's) id, or its name")


class ReadRequest(Payload):
    """engram.read: one captured object or document (data item) with its facts and links."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    id: uuid.UUID
    offset: int = Field(default=0, ge=0, description="first character of the text returned")
    max_chars: int = Field(default=20_000, ge=1, le=200_000)
    facts_limit: int = Field(default=100, ge=0, le=1000)
    # A document's chunks (from chunk_offset, at most `chunks`; 0: none), each with its session
    # date, speakers, resolved dates and the entities it mentions (the memory explorer's view).
    chunks: int = Field(default=0, ge=0, le=500)
    chunk_offset: int = Field(default=0, ge=0)


class ListRequest(Payload):
    """engram.list: a dataset's captured objects (type, project, tag) or documents (type = the
    document type, tag = a node set), newest first, a page at a time."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    kind: Literal["objects", "documents"] = "objects"
    type: str | None = Field(default=None, max_length=64)
    project: str | None = Field(default=None, max_length=200)
    tag: str | None = Field(default=None, max_length=200)
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=20, ge=1, le=200)

    @model_validator(mode="after")
    def _filters(self) -> ListRequest:
        from engram.pipelines.capture.vocabulary import OBJECT_TYPES
        from engram.pipelines.cognify.classify import DOC_TYPES

        if self.type is not None:
            self.type = self.type.strip().lower()
        if self.kind == "objects" and self.type is not None and self.type not in OBJECT_TYPES:
            raise ValueError(f"unknown object type {self.type!r}; expected one of {', '.join(OBJECT_TYPES)}")
        if self.kind == "documents" and self.project:
            raise ValueError("project filters captured objects: use kind 'objects'")
        if self.kind == "documents" and self.type is not None and self.type not in DOC_TYPES:
            raise ValueError(f"unknown document type {self.type!r}; expected one of {', '.join(DOC_TYPES)}")
        if self.kind == "objects" and self.tag is not None:
            self.tag = self.tag.strip().lower()
        return self


class EntityRequest(Payload):
    """engram.entity: an entity's dossier (facts with validity intervals, current and
    superseded, contradictions, sources)."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    entity: str = ENTITY_REF
    limit: int = Field(default=100, ge=1, le=1000, description="facts at most")


class GraphRequest(Payload):
    """engram.graph: the edges around an entity to depth 1 or 2, at most `limit` of them."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    entity: str = ENTITY_REF
    depth: int = Field(default=2, ge=1, le=2)
    limit: int = Field(default=100, ge=1, le=500)
    include_history: bool = Field(default=False, description="superseded and ended facts too")


class LinkRequest(Payload):
    """engram.link: a typed link between two objects or entities (ids or names) of one dataset,
    its predicate from the capture vocabulary; stored with origin `caller`."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    source: str = ENTITY_REF
    target: str = ENTITY_REF
    predicate: str = Field(min_length=1, max_length=64)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    note: str = Field(default="", max_length=2000)

    @field_validator("predicate")
    @classmethod
    def _known(cls, value: str) -> str:
        from engram.pipelines.capture.vocabulary import PREDICATES, canonical_predicate

        predicate = canonical_predicate(value)
        if predicate is None:
            raise ValueError(f"unknown predicate {value!r}; expected one of {', '.join(PREDICATES)}")
        return predicate


# ------------------------------------------------------------------ results


class Interval(BaseModel):
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    ended: bool = False
    asserted_at: datetime | None = None
    superseded_by: uuid.UUID | None = None


class Source(BaseModel):
    data_item_id: uuid.UUID
    title: str | None = None
    chunk_ids: list[uuid.UUID] = Field(default_factory=list)


class Fact(BaseModel):
    id: uuid.UUID
    predicate: str
    direction: Literal["out", "in"] | None = None  # from the entity's (or object's) side
    source_id: uuid.UUID
    source_name: str | None = None
    target_id: uuid.UUID
    target_name: str | None = None
    text: str = ""
    status: Literal["current", "superseded", "ended"] = "current"
    origin: str | None = None  # entity | llm | reasoner | caller (captures); none for extracted facts
    confidence: float | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: uuid.UUID | None = None
    supersession_reason: str | None = None
    intervals: list[Interval] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)


class ChunkMention(BaseModel):
    id: uuid.UUID
    name: str | None = None
    main: bool = False  # the entity the chunk is about


class ChunkView(BaseModel):
    """A document's chunk as read: where it sits, its conversation data and what it mentions."""

    id: uuid.UUID
    index: int
    text: str
    token_count: int = 0
    cut_type: str | None = None
    occurred_at: datetime | None = None  # a conversation chunk's session time
    speakers: list[str] | None = None
    dates: list[dict[str, Any]] | None = None  # relative phrases resolved: {phrase, start, end, turn}
    entities: list[ChunkMention] = Field(default_factory=list)


class ReadResult(BaseModel):
    kind: Literal["object", "document"]
    id: uuid.UUID
    dataset: str
    title: str | None = None
    text: str = ""
    text_chars: int = 0
    next_offset: int | None = None  # more text from here
    created_at: datetime | None = None
    node_sets: list[str] = Field(default_factory=list)
    doc_type: str | None = None
    object: dict[str, Any] | None = None  # a captured object's type, project, tags, summary, tier, stage...
    links: list[Fact] = Field(default_factory=list)  # edges touching the object itself
    facts: list[Fact] = Field(default_factory=list)  # facts its text states
    chunks: list[ChunkView] = Field(default_factory=list)  # only when the request asks (`chunks`)
    chunks_total: int | None = None
    next_chunk_offset: int | None = None


class ListResult(BaseModel):
    dataset: str
    kind: Literal["objects", "documents"]
    items: list[dict[str, Any]] = Field(default_factory=list)
    total: int = 0
    next_offset: int | None = None


class Contradiction(BaseModel):
    id: uuid.UUID
    between: list[uuid.UUID]  # the two facts (or objects) in conflict
    texts: list[str] = Field(default_factory=list)
    reason: str | None = None
    confidence: float | None = None


class EntityDossier(BaseModel):
    dataset: str
    id: uuid.UUID
    name: str
    type: str | None = None
    description: str = ""
    current: list[Fact] = Field(default_factory=list)
    superseded: list[Fact] = Field(default_factory=list)  # superseded or ended
    contradictions: list[Contradiction] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    truncated: bool = False


class GraphNode(BaseModel):
    id: uuid.UUID
    name: str | None = None
    type: str | None = None
    depth: int


class GraphResult(BaseModel):
    dataset: str
    root: uuid.UUID
    nodes: list[GraphNode] = Field(default_factory=list)
    edges: list[Fact] = Field(default_factory=list)
    truncated: bool = False


class LinkResult(BaseModel):
    status: Literal["linked"]
    dataset: str
    edge_id: uuid.UUID
    predicate: str
    source_id: uuid.UUID
    target_id: uuid.UUID
    text: str
    created: bool
