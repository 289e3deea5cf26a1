"""Turn windows: a conversation chunk's runs of 2 and 3 consecutive turns, each with its own
vector (no text: a window is its chunk's lines start .. start + width). The dense lane scores a
conversation chunk by its best windows (pipelines/cognify/windows.py). Existing conversation
chunks have none until their items are remembered again (docs/operations.md); until then they
are scored by their own vector, as before.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def _dimension() -> int:
    # The schema's dimension, recorded by 0001: a new vector column matches the existing ones.
    return int(op.get_bind().exec_driver_sql(
        "SELECT value FROM engram_meta WHERE key = 'embedding_dimension'").scalar_one())


def upgrade() -> None:
    op.execute(
        f"""
        CREATE TABLE IF NOT EXISTS chunk_windows (
            id uuid PRIMARY KEY,
            chunk_id uuid NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            document_id uuid NOT NULL,
            width smallint NOT NULL,
            start smallint NOT NULL,
            embedding vector({_dimension()})
        );
        CREATE INDEX IF NOT EXISTS ix_chunk_windows_chunk ON chunk_windows (chunk_id);
        CREATE INDEX IF NOT EXISTS ix_chunk_windows_dataset ON chunk_windows (dataset_id);
        CREATE INDEX IF NOT EXISTS ix_chunk_windows_embedding ON chunk_windows USING hnsw (embedding vector_cosine_ops);
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS chunk_windows")
