"""A btree on summaries (dataset_id): recall's exact scan of a small dataset's summary vectors
and the per-dataset index sweep's row counts read only the dataset's rows
(adapters/store/vector_indexes.py). The other vector tables have one leading on dataset_id.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_summaries_dataset ON summaries (dataset_id)")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_summaries_dataset")
