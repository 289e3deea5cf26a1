"""BM25's collection statistics (N and avgdl of the datasets' chunks) read from an index alone.

Every lexical query counts the datasets' chunks and averages their lengths
(adapters/store/search.py `_bm25_scored`); at 100,000 chunks that read of the chunks' heap cost
~15 ms of a default-route recall (bench/recall_latency.py). An index on (dataset_id) carrying
lex_length serves it as an index-only scan.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_chunks_dataset_lex ON chunks (dataset_id) INCLUDE (lex_length)"
               " WHERE lex_length IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_chunks_dataset_lex")
