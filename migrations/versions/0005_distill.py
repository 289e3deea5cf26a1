"""Session distillation and the truth subspace: lessons, writer decisions, the distillation
watermark, user preferences, truth bases and centroids. (Chunks already carry
truth_alignment / truth_epoch / truth_signature since 0001.)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _dimension() -> int:
    # The schema's recorded dimension (see 0003): new vector columns match the existing ones.
    return int(op.get_bind().exec_driver_sql(
        "SELECT value FROM engram_meta WHERE key = 'embedding_dimension'").scalar_one())


def upgrade() -> None:
    dim = _dimension()
    op.execute(
        f"""
        -- Distillation has its own watermark: persist_session_qa's may pass entries whose
        -- distillation calls failed, and those must be retried.
        ALTER TABLE session_improve_state ADD COLUMN distill_watermark_seq bigint NOT NULL DEFAULT 0;

        -- A published lesson; id = uuid5 of its normalised statement within the dataset.
        CREATE TABLE lessons (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            session_id varchar(200) NOT NULL,
            statement text NOT NULL,
            why_learned text NOT NULL DEFAULT '',
            entities text[] NOT NULL DEFAULT '{{}}',
            member_entry_ids text[] NOT NULL DEFAULT '{{}}',
            data_item_id uuid REFERENCES data_items(id) ON DELETE CASCADE,
            improve_run_id uuid,
            embedding vector({dim}),
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_lessons_dataset ON lessons (dataset_id, session_id);
        CREATE INDEX ix_lessons_embedding ON lessons USING hnsw (embedding vector_cosine_ops);

        -- Every writer decision of a run (accepted, rejected with its reason, or failed).
        CREATE TABLE lesson_decisions (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            session_id varchar(200) NOT NULL,
            improve_run_id uuid,
            working_statement text NOT NULL,
            member_entry_ids text[] NOT NULL DEFAULT '{{}}',
            accepted boolean NOT NULL,
            reason varchar(32),
            statement text NOT NULL DEFAULT '',
            why_learned text NOT NULL DEFAULT '',
            lesson_id uuid,
            error text,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_lesson_decisions_session ON lesson_decisions (dataset_id, session_id, created_at);

        -- update_user_preferences: preference statements per user, from session entries.
        CREATE TABLE user_preferences (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            session_id varchar(200) NOT NULL,
            statement text NOT NULL,
            entry_id uuid,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_user_preferences_user ON user_preferences (dataset_id, user_id);

        -- The live truth basis per dataset; centroids are written before chunks are stamped.
        CREATE TABLE truth_bases (
            dataset_id uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
            epoch integer NOT NULL,
            signature varchar(64) NOT NULL,
            learnings integer NOT NULL,
            built_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE truth_centroids (
            dataset_id uuid NOT NULL REFERENCES truth_bases(dataset_id) ON DELETE CASCADE,
            slot integer NOT NULL,
            centroid double precision[] NOT NULL,
            members integer NOT NULL,
            PRIMARY KEY (dataset_id, slot)
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE IF EXISTS truth_centroids, truth_bases, user_preferences, lesson_decisions, lessons CASCADE;
        ALTER TABLE session_improve_state DROP COLUMN IF EXISTS distill_watermark_seq;
        UPDATE chunks SET truth_alignment = NULL, truth_epoch = NULL, truth_signature = NULL
            WHERE truth_epoch IS NOT NULL;
        """
    )
