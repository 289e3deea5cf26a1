"""Distillation and the truth subspace: lessons, decisions, preferences, truth bases (migration 0004)."""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    func,
)
from sqlalchemy.dialects.postgresql import UUID

from engram.models.tables.base import created_column, ts_column, metadata
from engram.models.tables.improve import session_improve_state


session_improve_state.append_column(Column("distill_watermark_seq", BigInteger, nullable=False, server_default="0"))

lessons = Table(
    "lessons",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("statement", Text, nullable=False),
    Column("why_learned", Text, nullable=False, server_default=""),
    Column("entities", ARRAY(Text), nullable=False, server_default="{}"),
    Column("member_entry_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("data_item_id", UUID(as_uuid=True), ForeignKey("data_items.id", ondelete="CASCADE")),
    Column("improve_run_id", UUID(as_uuid=True)),
    Column("embedding", Vector()),
    created_column(),
)

lesson_decisions = Table(
    "lesson_decisions",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("improve_run_id", UUID(as_uuid=True)),
    Column("working_statement", Text, nullable=False),
    Column("member_entry_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("accepted", Boolean, nullable=False),
    Column("reason", String(32)),
    Column("statement", Text, nullable=False, server_default=""),
    Column("why_learned", Text, nullable=False, server_default=""),
    Column("lesson_id", UUID(as_uuid=True)),
    Column("error", Text),
    created_column(),
)

user_preferences = Table(
    "user_preferences",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("statement", Text, nullable=False),
    Column("entry_id", UUID(as_uuid=True)),
    created_column(),
)

truth_bases = Table(
    "truth_bases",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("epoch", Integer, nullable=False),
    Column("signature", String(64), nullable=False),
    Column("learnings", Integer, nullable=False),
    ts_column("built_at", nullable=False, server_default=func.now()),
)

truth_centroids = Table(
    "truth_centroids",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("truth_bases.dataset_id", ondelete="CASCADE"),
           primary_key=True),
    Column("slot", Integer, primary_key=True),
    Column("centroid", ARRAY(Float), nullable=False),
    Column("members", Integer, nullable=False),
)
