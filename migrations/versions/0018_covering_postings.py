"""BM25 postings read from the index alone: chunk_terms' primary key carries tf and dl.

recall's BM25 (adapters/store/search.py `_bm25_scored`) reads every posting of the question's
terms. Rows of one term lie scattered over the heap (a load writes a chunk's terms together),
so at 100,000 chunks a question's ~30,000 postings cost as many heap pages: the lexical lane
took 340 ms p50 (bench/recall_latency.py). With tf and dl in the key's index the read is an
index-only scan of a few hundred pages (that query: 405 -> 104 ms).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE chunk_terms DROP CONSTRAINT chunk_terms_pkey,"
               " ADD CONSTRAINT chunk_terms_pkey PRIMARY KEY (dataset_id, term, chunk_id) INCLUDE (tf, dl)")


def downgrade() -> None:
    op.execute("ALTER TABLE chunk_terms DROP CONSTRAINT chunk_terms_pkey,"
               " ADD CONSTRAINT chunk_terms_pkey PRIMARY KEY (dataset_id, term, chunk_id)")
