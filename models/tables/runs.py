"""Pipeline runs and their stages (every flow's bookkeeping)."""

from __future__ import annotations

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

from engram.models.tables.base import created_column, ts_column, metadata


pipeline_runs = Table(
    "pipeline_runs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("pipeline", String(64), nullable=False),  # the flow: cognify | maintenance | capture | improve
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE")),
    Column("data_item_id", UUID(as_uuid=True)),
    # pending | running | completed | partial (capture) | failed | forgotten; improve also no_op |
    # completed_with_errors | aborted | lost | budget_exhausted
    Column("status", String(32), nullable=False),
    Column("error", Text),
    Column("params", JSONB, nullable=False, server_default="{}"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("llm_calls", Integer, nullable=False, server_default="0"),
    Column("tokens", Integer, nullable=False, server_default="0"),
    created_column(),
    ts_column("started_at"),
    ts_column("finished_at"),
    ts_column("heartbeat_at"),
    # An improve run: the claim it runs under (one pass of it), its sessions, fencing number,
    # trigger, the pending-work snapshot it took and its budget.
    Column("claim_id", UUID(as_uuid=True), ForeignKey("improve_claims.id", ondelete="CASCADE")),
    Column("pass", Integer, nullable=False, server_default="1"),
    Column("session_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("fence", BigInteger),
    Column("trigger", String(16)),
    Column("snapshot", JSONB, nullable=False, server_default="{}"),
    Column("budget", JSONB, nullable=False, server_default="{}"),
)

stage_runs = Table(
    "stage_runs",
    metadata,
    Column("run_id", UUID(as_uuid=True), ForeignKey("pipeline_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("stage", String(64), primary_key=True),
    Column("position", Integer, nullable=False),
    # pending | running | completed | failed | skipped | forgotten; improve also not_available |
    # already_completed | fenced_out
    Column("status", String(32), nullable=False),
    Column("fatal", Boolean, nullable=False, server_default="false"),  # improve: its failure aborts the run
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("error", Text),
    Column("reason", Text),
    # The stage's output, so a retried run resumes here instead of redoing the stage.
    Column("output", JSONB),
    Column("llm_calls", Integer, nullable=False, server_default="0"),
    Column("prompt_tokens", Integer, nullable=False, server_default="0"),
    Column("completion_tokens", Integer, nullable=False, server_default="0"),
    ts_column("started_at"),
    ts_column("finished_at"),
)
