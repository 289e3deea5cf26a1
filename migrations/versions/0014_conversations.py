"""Conversations as data: a chunk of a conversation carries its session's time, its speakers,
the absolute dates its relative phrases ("yesterday", "next month") resolved to and its turns;
a session entry carries its own time and the dates of its question and answer. NULL for
everything else.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE chunks
            ADD COLUMN IF NOT EXISTS occurred_at timestamptz,
            ADD COLUMN IF NOT EXISTS speakers text[],
            ADD COLUMN IF NOT EXISTS dates jsonb,
            ADD COLUMN IF NOT EXISTS conversation jsonb;
        CREATE INDEX IF NOT EXISTS ix_chunks_occurred_at ON chunks (dataset_id, occurred_at)
            WHERE occurred_at IS NOT NULL;
        CREATE INDEX IF NOT EXISTS ix_chunks_speakers ON chunks USING gin (speakers) WHERE speakers IS NOT NULL;
        ALTER TABLE session_entries
            ADD COLUMN IF NOT EXISTS occurred_at timestamptz,
            ADD COLUMN IF NOT EXISTS dates jsonb;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        ALTER TABLE session_entries DROP COLUMN IF EXISTS dates, DROP COLUMN IF EXISTS occurred_at;
        DROP INDEX IF EXISTS ix_chunks_speakers;
        DROP INDEX IF EXISTS ix_chunks_occurred_at;
        ALTER TABLE chunks DROP COLUMN IF EXISTS conversation, DROP COLUMN IF EXISTS dates,
            DROP COLUMN IF EXISTS speakers, DROP COLUMN IF EXISTS occurred_at;
        """
    )
