"""Recall indexes maintained in the load transaction: BM25 postings per chunk (term, tf, length)
and the years each chunk names (TEMPORAL filters on an indexed column, not a regex).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from alembic import op
from sqlalchemy import text

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

BATCH = 1000


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE chunks ADD COLUMN lex_length integer, ADD COLUMN years integer[];
        CREATE INDEX ix_chunks_years ON chunks USING gin (years);
        CREATE INDEX ix_chunks_lex ON chunks (dataset_id) INCLUDE (lex_length) WHERE lex_length IS NOT NULL;
        -- One row per (dataset, term, chunk): document frequency and BM25 scores come from here.
        CREATE TABLE chunk_terms (
            dataset_id uuid NOT NULL,
            term text NOT NULL,
            chunk_id uuid NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            tf integer NOT NULL,
            dl integer NOT NULL,
            PRIMARY KEY (dataset_id, term, chunk_id)
        );
        CREATE INDEX ix_chunk_terms_chunk ON chunk_terms (chunk_id);
        """
    )
    _backfill()


def _backfill() -> None:
    """Index the chunks loaded before this revision with the same code the load uses."""
    from engram.pipelines.dates import years_named
    from engram.pipelines.recall.lexical import postings

    conn = op.get_bind()
    last = None
    while True:
        rows = conn.execute(text(
            "SELECT id, dataset_id, text FROM chunks WHERE (CAST(:last AS uuid) IS NULL OR id > :last)"
            " ORDER BY id LIMIT :n"), {"last": last, "n": BATCH}).all()
        if not rows:
            return
        terms, chunks = [], []
        for chunk, dataset, body in rows:
            counts, length = postings(body)
            chunks.append({"id": chunk, "dl": length, "years": years_named(body)})
            terms += [{"d": dataset, "t": t, "c": chunk, "tf": tf, "dl": length} for t, tf in counts.items()]
        conn.execute(text("UPDATE chunks SET lex_length = :dl, years = :years WHERE id = :id"), chunks)
        if terms:
            conn.execute(text("INSERT INTO chunk_terms (dataset_id, term, chunk_id, tf, dl)"
                              " VALUES (:d, :t, :c, :tf, :dl) ON CONFLICT DO NOTHING"), terms)
        last = rows[-1][0]


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE IF EXISTS chunk_terms;
        DROP INDEX IF EXISTS ix_chunks_lex;
        DROP INDEX IF EXISTS ix_chunks_years;
        ALTER TABLE chunks DROP COLUMN IF EXISTS years, DROP COLUMN IF EXISTS lex_length;
        """
    )
