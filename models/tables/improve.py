"""Session entries and improve's state, fences and claims (migration 0003)."""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    BigInteger,
    FetchedValue,
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


session_entries = Table(
    "session_entries",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("session_id", String(200), nullable=False),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("question", Text, nullable=False, server_default=""),
    Column("answer", Text, nullable=False, server_default=""),
    Column("context", Text, nullable=False, server_default=""),
    Column("helpful_count", Integer, nullable=False, server_default="0"),
    Column("harmful_count", Integer, nullable=False, server_default="0"),
    Column("confidence", Float, nullable=False, server_default="1.0"),
    Column("source_chunk_ids", ARRAY(UUID(as_uuid=True)), nullable=False, server_default="{}"),
    Column("source_edge_ids", ARRAY(UUID(as_uuid=True)), nullable=False, server_default="{}"),
    # Monotonic order of arrival: watermarks are "seq <= N", never timestamps.
    Column("seq", BigInteger, nullable=False, server_default=FetchedValue()),
    created_column(),
)

# ------------------------------------------------------------------ improve (migration 0003)

# Feedback already folded into chunk/edge feedback weights by the feedback_weights stage.
session_entries.append_column(Column("feedback_applied_helpful", Integer, nullable=False, server_default="0"))
session_entries.append_column(Column("feedback_applied_harmful", Integer, nullable=False, server_default="0"))
session_entries.append_column(ts_column("feedback_at"))
# The entry's own time and the absolute dates of its relative phrases (migration 0014).
session_entries.append_column(ts_column("occurred_at"))
session_entries.append_column(Column("dates", JSONB(none_as_null=True)))

session_improve_state = Table(
    "session_improve_state",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("session_id", String(200), primary_key=True),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("watermark_seq", BigInteger, nullable=False, server_default="0"),
    Column("entries_since_improve", Integer, nullable=False, server_default="0"),
    ts_column("last_improve_at"),
    Column("auto_requests", Integer, nullable=False, server_default="0"),
    ts_column("rerun_requested_at"),
    Column("declined_reason", Text),
    ts_column("declined_at"),
    ts_column("updated_at", nullable=False, server_default=func.now()),
)

dataset_improve_state = Table(
    "dataset_improve_state",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    ts_column("triplet_watermark"),
    ts_column("rerun_requested_at"),
    ts_column("last_improve_at"),
    ts_column("updated_at", nullable=False, server_default=func.now()),
)

improve_fences = Table(
    "improve_fences",
    metadata,
    Column("scope", String(300), primary_key=True),
    Column("fence", BigInteger, nullable=False),
    ts_column("updated_at", nullable=False, server_default=func.now()),
)

improve_claims = Table(
    "improve_claims",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("session_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("fence", BigInteger, nullable=False),
    Column("claim_keys", ARRAY(Text), nullable=False),
    Column("claim_value", Text, nullable=False),
    Column("trigger", String(16), nullable=False),
    Column("status", String(16), nullable=False),  # held | released | lost | abandoned
    Column("passes", Integer, nullable=False, server_default="0"),
    ts_column("claimed_at", nullable=False, server_default=func.clock_timestamp()),
    ts_column("renewed_at", nullable=False, server_default=func.clock_timestamp()),
    ts_column("released_at"),
    ts_column("lost_at"),
    Column("note", Text),
)

triplet_embeddings = Table(
    "triplet_embeddings",
    metadata,
    Column("edge_id", UUID(as_uuid=True), ForeignKey("edges.id", ondelete="CASCADE"), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("text", Text, nullable=False),
    Column("embedding", Vector()),
    ts_column("updated_at", nullable=False, server_default=func.now()),
)
