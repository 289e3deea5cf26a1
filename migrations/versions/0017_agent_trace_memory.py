"""Agent traces become memory (issue 36): a trace keeps the memory its call was shown and an
arrival order (`seq`, as session entries have); a session keeps two watermarks over its traces,
one for persist_agent_traces (trace → session entry) and one for extract_agent_context.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE agent_traces ADD COLUMN IF NOT EXISTS memory text;
        ALTER TABLE agent_traces ADD COLUMN IF NOT EXISTS seq bigserial;
        CREATE INDEX IF NOT EXISTS ix_agent_traces_session_seq ON agent_traces (dataset_id, session_id, seq);
        ALTER TABLE session_improve_state ADD COLUMN IF NOT EXISTS trace_watermark_seq bigint NOT NULL DEFAULT 0;
        ALTER TABLE session_improve_state ADD COLUMN IF NOT EXISTS context_watermark_seq bigint NOT NULL DEFAULT 0;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        ALTER TABLE session_improve_state DROP COLUMN IF EXISTS context_watermark_seq;
        ALTER TABLE session_improve_state DROP COLUMN IF EXISTS trace_watermark_seq;
        DROP INDEX IF EXISTS ix_agent_traces_session_seq;
        ALTER TABLE agent_traces DROP COLUMN IF EXISTS seq;
        ALTER TABLE agent_traces DROP COLUMN IF EXISTS memory;
        """
    )
