"""BM25's statistics kept per dataset as rows change, not aggregated per query.

recall's BM25 (adapters/store/search.py) counted the datasets' chunks and averaged their lengths
on every question, and counted each query term's postings for its df: linear in the dataset
(issue #38). Two tables now hold them, kept by triggers in the transaction that writes the rows,
whatever writes them (the load, forget, import, a dataset's deletion, the benches' COPY):

- chunk_lex_stats (dataset_id, chunks, total_length): chunks with a BM25 length and the sum of
  those lengths (N and N * avgdl);
- chunk_term_df (dataset_id, term, df): chunks holding the term (rows reaching 0 are deleted).

Inserts and deletes are counted once per statement from its transition tables; a chunk's length
changing (a reload) row by row. Every trigger first locks the datasets' chunk_lex_stats rows, in
dataset order, so two writers of one dataset queue there and never deadlock on df rows: loads
of one dataset commit one after another from their chunks' insert on. Existing rows are counted
once here. The index of 0019 (N and avgdl from the chunks' index) is no longer read: dropped.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05
"""

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

# Lock the datasets' statistics rows in dataset order (an insert first creates missing ones; a
# delete creates none: its dataset may be going, cascading).
_CREATE = ("  INSERT INTO chunk_lex_stats (dataset_id, chunks, total_length)"
           "   SELECT DISTINCT dataset_id, 0, 0 FROM new_rows ORDER BY dataset_id ON CONFLICT DO NOTHING;")
_LOCK = ("  PERFORM 1 FROM chunk_lex_stats s WHERE s.dataset_id IN (SELECT dataset_id FROM {rows})"
         "   ORDER BY s.dataset_id FOR UPDATE;")

FUNCTIONS = (
    # chunks: statement-level, inserted (sign +1) or deleted (sign -1) rows.
    "CREATE FUNCTION engram_chunk_lex_stats() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  IF TG_OP = 'INSERT' THEN"
    + _CREATE + _LOCK.format(rows="new_rows") +
    "   UPDATE chunk_lex_stats s SET chunks = s.chunks + d.n, total_length = s.total_length + d.total"
    "    FROM (SELECT dataset_id, count(lex_length) AS n, COALESCE(sum(lex_length), 0) AS total"
    "          FROM new_rows GROUP BY dataset_id) d WHERE s.dataset_id = d.dataset_id;"
    "  ELSE"
    + _LOCK.format(rows="old_rows") +
    "   UPDATE chunk_lex_stats s SET chunks = s.chunks - d.n, total_length = s.total_length - d.total"
    "    FROM (SELECT dataset_id, count(lex_length) AS n, COALESCE(sum(lex_length), 0) AS total"
    "          FROM old_rows GROUP BY dataset_id) d WHERE s.dataset_id = d.dataset_id;"
    "  END IF;"
    "  RETURN NULL;"
    " END $$",
    # chunks: row-level, a chunk's BM25 length changed (a reload's upsert).
    "CREATE FUNCTION engram_chunk_lex_length() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  INSERT INTO chunk_lex_stats (dataset_id, chunks, total_length) VALUES (NEW.dataset_id, 0, 0)"
    "   ON CONFLICT DO NOTHING;"
    "  UPDATE chunk_lex_stats SET chunks = chunks - (OLD.lex_length IS NOT NULL)::int,"
    "   total_length = total_length - COALESCE(OLD.lex_length, 0) WHERE dataset_id = OLD.dataset_id;"
    "  UPDATE chunk_lex_stats SET chunks = chunks + (NEW.lex_length IS NOT NULL)::int,"
    "   total_length = total_length + COALESCE(NEW.lex_length, 0) WHERE dataset_id = NEW.dataset_id;"
    "  RETURN NULL;"
    " END $$",
    # chunk_terms: statement-level, postings inserted or deleted.
    "CREATE FUNCTION engram_chunk_term_df() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  IF TG_OP = 'INSERT' THEN"
    + _CREATE + _LOCK.format(rows="new_rows") +
    "   INSERT INTO chunk_term_df AS t (dataset_id, term, df)"
    "    SELECT dataset_id, term, count(*) FROM new_rows GROUP BY dataset_id, term ORDER BY dataset_id, term"
    "    ON CONFLICT (dataset_id, term) DO UPDATE SET df = t.df + EXCLUDED.df;"
    "  ELSE"
    + _LOCK.format(rows="old_rows") +
    "   UPDATE chunk_term_df t SET df = t.df - d.n"
    "    FROM (SELECT dataset_id, term, count(*) AS n FROM old_rows GROUP BY dataset_id, term) d"
    "    WHERE t.dataset_id = d.dataset_id AND t.term = d.term;"
    "   DELETE FROM chunk_term_df t USING (SELECT DISTINCT dataset_id, term FROM old_rows) d"
    "    WHERE t.dataset_id = d.dataset_id AND t.term = d.term AND t.df <= 0;"
    "  END IF;"
    "  RETURN NULL;"
    " END $$",
)

TRIGGERS = (
    "CREATE TRIGGER chunks_lex_stats_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION engram_chunk_lex_stats()",
    "CREATE TRIGGER chunks_lex_stats_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION engram_chunk_lex_stats()",
    "CREATE TRIGGER chunks_lex_stats_update AFTER UPDATE OF lex_length, dataset_id ON chunks FOR EACH ROW"
    " WHEN (OLD.lex_length IS DISTINCT FROM NEW.lex_length OR OLD.dataset_id IS DISTINCT FROM NEW.dataset_id)"
    " EXECUTE FUNCTION engram_chunk_lex_length()",
    "CREATE TRIGGER chunk_terms_df_insert AFTER INSERT ON chunk_terms REFERENCING NEW TABLE AS new_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION engram_chunk_term_df()",
    "CREATE TRIGGER chunk_terms_df_delete AFTER DELETE ON chunk_terms REFERENCING OLD TABLE AS old_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION engram_chunk_term_df()",
)


def upgrade() -> None:
    op.execute("CREATE TABLE chunk_lex_stats (dataset_id uuid PRIMARY KEY REFERENCES datasets (id) ON DELETE CASCADE,"
               " chunks bigint NOT NULL, total_length bigint NOT NULL)")
    op.execute("CREATE TABLE chunk_term_df (dataset_id uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,"
               " term text NOT NULL, df bigint NOT NULL, PRIMARY KEY (dataset_id, term) INCLUDE (df))")
    op.execute("LOCK TABLE chunks, chunk_terms IN SHARE MODE")  # no write between the count and the triggers
    op.execute("INSERT INTO chunk_lex_stats SELECT d.id, count(c.lex_length), COALESCE(sum(c.lex_length), 0)"
               " FROM datasets d LEFT JOIN chunks c ON c.dataset_id = d.id GROUP BY d.id")
    op.execute("INSERT INTO chunk_term_df SELECT dataset_id, term, count(*) FROM chunk_terms GROUP BY dataset_id, term")
    for statement in (*FUNCTIONS, *TRIGGERS):
        op.execute(statement)
    op.execute("DROP INDEX IF EXISTS ix_chunks_dataset_lex")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_chunks_dataset_lex ON chunks (dataset_id) INCLUDE (lex_length)"
               " WHERE lex_length IS NOT NULL")
    for trigger, table in (("chunks_lex_stats_insert", "chunks"), ("chunks_lex_stats_delete", "chunks"),
                           ("chunks_lex_stats_update", "chunks"), ("chunk_terms_df_insert", "chunk_terms"),
                           ("chunk_terms_df_delete", "chunk_terms")):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
    for function in ("engram_chunk_lex_stats", "engram_chunk_lex_length", "engram_chunk_term_df"):
        op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    op.execute("DROP TABLE IF EXISTS chunk_term_df")
    op.execute("DROP TABLE IF EXISTS chunk_lex_stats")
