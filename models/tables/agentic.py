"""Agentic completion (SPEC 8): skills, tools, skill runs and proposals, traces."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    FetchedValue,
    Float,
    ForeignKey,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

from engram.models.tables.base import created_column, ts_column, metadata
from engram.models.tables.improve import session_improve_state


skills = Table(
    "skills",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("procedure", Text, nullable=False),
    Column("tools", JSONB, nullable=False, server_default="[]"),
    Column("history", JSONB, nullable=False, server_default="[]"),
    created_column(),
    ts_column("updated_at", nullable=False, server_default=func.now()),
    UniqueConstraint("dataset_id", "name"),
)

agent_tools = Table(
    "agent_tools",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("name", String(200), primary_key=True),
    Column("description", Text, nullable=False, server_default=""),
    Column("handler", String(300), nullable=False),
    Column("arguments", JSONB, nullable=False, server_default="{}"),
    Column("required", JSONB, nullable=False, server_default="[]"),
    Column("permission", String(16), nullable=False),
    ts_column("updated_at", nullable=False, server_default=func.now()),
)

skill_runs = Table(
    "skill_runs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("skill_id", UUID(as_uuid=True), ForeignKey("skills.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("task", Text, nullable=False),
    Column("result_summary", Text, nullable=False, server_default=""),
    Column("score", Float),
    Column("tool_trace", JSONB, nullable=False, server_default="[]"),
    Column("error", Text),
    ts_column("started_at"),
    ts_column("finished_at"),
)

skill_proposals = Table(
    "skill_proposals",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("skill_id", UUID(as_uuid=True), ForeignKey("skills.id", ondelete="CASCADE"), nullable=False),
    Column("status", String(16), nullable=False),  # proposed | applied | superseded
    Column("old_procedure", Text, nullable=False),
    Column("new_procedure", Text, nullable=False),
    Column("rationale", Text, nullable=False, server_default=""),
    Column("confidence", Float, nullable=False),
    Column("run_ids", JSONB, nullable=False, server_default="[]"),
    created_column(),
    ts_column("applied_at"),
)

agent_traces = Table(
    "agent_traces",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("session_id", String(200)),
    Column("function", String(300), nullable=False),
    Column("inputs", Text, nullable=False),
    Column("result", Text),
    Column("error", Text),
    created_column(),
    # Migration 0017: the memory the call was shown, and the order of arrival (watermarks are
    # "seq <= N", as for session entries).
    Column("memory", Text),
    Column("seq", BigInteger, nullable=False, server_default=FetchedValue()),
)

# How far a session's traces became session entries / were distilled (migration 0017).
session_improve_state.append_column(Column("trace_watermark_seq", BigInteger, nullable=False, server_default="0"))
session_improve_state.append_column(Column("context_watermark_seq", BigInteger, nullable=False, server_default="0"))
