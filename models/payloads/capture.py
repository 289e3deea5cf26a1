"""The capture lane (SPEC 9): typed knowledge objects, their acceptance and status."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from engram.models.payloads.base import NAME, Payload
from engram.models.payloads.cognify import RunStatus, StageStatus


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


class CaptureReprocessed(BaseModel):
    object_id: uuid.UUID
    run_id: uuid.UUID
    status: Literal["pending"] = "pending"
    stages: list[str]


class CaptureStatus(BaseModel):
    """Where a capture stands, read from its run: complete when no stage failed, partial when an
    (optional) stage failed and the object is stored; failed only if the run was abandoned."""

    object_id: uuid.UUID
    run_id: uuid.UUID | None = None
    status: Literal["pending", "complete", "partial", "failed", "ingested", "forgotten"]
    stages: list[StageStatus] = Field(default_factory=list)

    @classmethod
    def of(cls, object_id: uuid.UUID, run: RunStatus | None) -> CaptureStatus:
        if run is None:
            return cls(object_id=object_id, status="ingested")
        status = "pending" if not run.done else "complete" if run.status == "completed" else run.status
        return cls(object_id=object_id, run_id=run.run_id, status=status, stages=run.stages)
