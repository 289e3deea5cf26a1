"""Index of finished runs by time: accept measures the fleet's recent drain rate for its ETA.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_pipeline_runs_finished ON pipeline_runs (finished_at) WHERE finished_at IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_pipeline_runs_finished")
