"""Entity lookups by a name's first and last word: recall's multi-hop walk finds "Neil Alden
Armstrong" for "Neil Armstrong" and "Wolfgang Amadeus Mozart" for "Mozart" through these
indexes (the LIKE patterns alone scanned every entity of the dataset).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE INDEX IF NOT EXISTS ix_entities_first_word ON entities (dataset_id, split_part(name, '_', 1));
        CREATE INDEX IF NOT EXISTS ix_entities_last_word ON entities (dataset_id, reverse(split_part(reverse(name), '_', 1)));
        """
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_entities_last_word; DROP INDEX IF EXISTS ix_entities_first_word;")
