"""vector_index_failures: a per-dataset vector index whose build or rebuild failed waits before
the sweep tries it again (adapters/store/vector_indexes.py), instead of being rebuilt by every
sweep. One row per index name while it fails; deleted when it builds, when it is no longer due
and when its dataset is forgotten. Written only by the sweep, so not declared in models/tables.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07
"""

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE TABLE IF NOT EXISTS vector_index_failures ("
        " name text PRIMARY KEY,"
        " failures integer NOT NULL,"
        " last_error text NOT NULL,"
        " failed_at timestamptz NOT NULL DEFAULT now(),"
        " retry_after timestamptz NOT NULL)"
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS vector_index_failures")
