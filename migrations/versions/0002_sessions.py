"""Session memory: entries (question, answer, context, feedback) per session and dataset.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE session_entries (
            id uuid PRIMARY KEY,
            session_id varchar(200) NOT NULL,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            question text NOT NULL DEFAULT '',
            answer text NOT NULL DEFAULT '',
            context text NOT NULL DEFAULT '',
            helpful_count integer NOT NULL DEFAULT 0,
            harmful_count integer NOT NULL DEFAULT 0,
            confidence double precision NOT NULL DEFAULT 1.0,
            source_chunk_ids uuid[] NOT NULL DEFAULT '{}',
            source_edge_ids uuid[] NOT NULL DEFAULT '{}',
            seq bigserial NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_session_entries_session ON session_entries (dataset_id, session_id, seq);
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS session_entries CASCADE")
