"""The capture lane's objects and requests (migration 0007)."""

from __future__ import annotations

from sqlalchemy import (
    ARRAY,
    Column,
    Float,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

from engram.models.tables.base import created_column, ts_column, metadata


capture_objects = Table(
    "capture_objects",
    metadata,
    # The object's id is its data item's id and its graph node's (entities) id.
    Column("id", UUID(as_uuid=True), ForeignKey("data_items.id", ondelete="CASCADE"), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("title", Text, nullable=False),
    Column("obj_type", String(32), nullable=False),
    Column("project", Text, nullable=False, server_default=""),
    Column("tags", ARRAY(Text), nullable=False, server_default="{}"),
    Column("properties", JSONB, nullable=False, server_default="{}"),
    Column("summary", Text),
    Column("confidence", Float, nullable=False, server_default="0"),
    Column("tier", String(16), nullable=False, server_default="archive"),
    Column("stage", String(16), nullable=False, server_default="ingested"),
    Column("connection_count", Integer, nullable=False, server_default="0"),
    Column("staleness", Float, nullable=False, server_default="0"),
    Column("captured_by", String(64), nullable=False, server_default=""),
    Column("run_id", UUID(as_uuid=True)),
    created_column(),
    ts_column("updated_at", nullable=False, server_default=func.now()),
)

capture_requests = Table(
    "capture_requests",
    metadata,
    Column("object_id", UUID(as_uuid=True), ForeignKey("capture_objects.id", ondelete="CASCADE"), primary_key=True),
    Column("request", JSONB, nullable=False),
    created_column(),
)
