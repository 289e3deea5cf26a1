"""Improve machinery: per-session improve state, claims, runs with per-stage results, fences,
triplet embeddings, feedback bookkeeping on session entries.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _dimension() -> int:
    # The schema's dimension, recorded by 0001: new vector columns must match the existing ones
    # even if ENGRAM_EMBEDDING_DIMENSION changed since (start-up then reports the mismatch).
    return int(op.get_bind().exec_driver_sql(
        "SELECT value FROM engram_meta WHERE key = 'embedding_dimension'").scalar_one())


def upgrade() -> None:
    dim = _dimension()
    op.execute(
        f"""
        ALTER TABLE session_entries
            ADD COLUMN feedback_applied_helpful integer NOT NULL DEFAULT 0,
            ADD COLUMN feedback_applied_harmful integer NOT NULL DEFAULT 0,
            ADD COLUMN feedback_at timestamptz;
        CREATE INDEX ix_session_entries_feedback ON session_entries (dataset_id, session_id)
            WHERE helpful_count <> feedback_applied_helpful OR harmful_count <> feedback_applied_harmful;

        -- Debounce counters, the last improve, the processed watermark and any rerun request.
        CREATE TABLE session_improve_state (
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            session_id varchar(200) NOT NULL,
            user_id uuid REFERENCES users(id) ON DELETE SET NULL,
            watermark_seq bigint NOT NULL DEFAULT 0,
            entries_since_improve integer NOT NULL DEFAULT 0,
            last_improve_at timestamptz,
            auto_requests integer NOT NULL DEFAULT 0,
            rerun_requested_at timestamptz,
            declined_reason text,
            declined_at timestamptz,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (dataset_id, session_id)
        );
        CREATE INDEX ix_session_improve_state_rerun ON session_improve_state (rerun_requested_at)
            WHERE rerun_requested_at IS NOT NULL;

        CREATE TABLE dataset_improve_state (
            dataset_id uuid PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
            triplet_watermark timestamptz,
            rerun_requested_at timestamptz,
            last_improve_at timestamptz,
            updated_at timestamptz NOT NULL DEFAULT now()
        );

        -- Highest fencing number seen per claim scope: a write carrying a lower one is refused.
        CREATE TABLE improve_fences (
            scope varchar(300) PRIMARY KEY,
            fence bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );

        -- One row per successful claim: who held which keys, from when to when.
        CREATE TABLE improve_claims (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            session_ids text[] NOT NULL DEFAULT '{{}}',
            fence bigint NOT NULL,
            claim_keys text[] NOT NULL,
            claim_value text NOT NULL,
            trigger varchar(16) NOT NULL,
            status varchar(16) NOT NULL
                CHECK (status IN ('held', 'released', 'lost', 'abandoned')),
            passes integer NOT NULL DEFAULT 0,
            claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            renewed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            released_at timestamptz,
            lost_at timestamptz,
            note text
        );
        CREATE INDEX ix_improve_claims_held ON improve_claims (dataset_id) WHERE status = 'held';

        -- One row per pass (a chain of stage tasks) of a claim.
        CREATE TABLE improve_runs (
            id uuid PRIMARY KEY,
            claim_id uuid REFERENCES improve_claims(id) ON DELETE CASCADE,
            pass integer NOT NULL DEFAULT 1,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            session_ids text[] NOT NULL DEFAULT '{{}}',
            fence bigint,
            trigger varchar(16) NOT NULL,
            status varchar(32) NOT NULL,
            snapshot jsonb NOT NULL DEFAULT '{{}}',
            budget jsonb NOT NULL DEFAULT '{{}}',
            llm_calls integer NOT NULL DEFAULT 0,
            tokens integer NOT NULL DEFAULT 0,
            error text,
            created_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz
        );
        CREATE INDEX ix_improve_runs_dataset ON improve_runs (dataset_id, created_at);

        CREATE TABLE improve_stage_runs (
            run_id uuid NOT NULL REFERENCES improve_runs(id) ON DELETE CASCADE,
            stage varchar(64) NOT NULL,
            position integer NOT NULL,
            fatal boolean NOT NULL DEFAULT false,
            status varchar(32) NOT NULL,
            reason text,
            error text,
            counts jsonb NOT NULL DEFAULT '{{}}',
            attempts integer NOT NULL DEFAULT 0,
            llm_calls integer NOT NULL DEFAULT 0,
            prompt_tokens integer NOT NULL DEFAULT 0,
            completion_tokens integer NOT NULL DEFAULT 0,
            started_at timestamptz,
            finished_at timestamptz,
            PRIMARY KEY (run_id, stage)
        );

        -- triplet_enrichment: "source relationship target" texts embedded for triplet search.
        CREATE TABLE triplet_embeddings (
            edge_id uuid PRIMARY KEY REFERENCES edges(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            text text NOT NULL,
            embedding vector({dim}),
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_triplet_embeddings_dataset ON triplet_embeddings (dataset_id);
        CREATE INDEX ix_triplet_embeddings_embedding ON triplet_embeddings USING hnsw (embedding vector_cosine_ops);
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE IF EXISTS triplet_embeddings, improve_stage_runs, improve_runs, improve_claims,
            improve_fences, dataset_improve_state, session_improve_state CASCADE;
        DROP INDEX IF EXISTS ix_session_entries_feedback;
        ALTER TABLE session_entries
            DROP COLUMN IF EXISTS feedback_applied_helpful,
            DROP COLUMN IF EXISTS feedback_applied_harmful,
            DROP COLUMN IF EXISTS feedback_at;
        """
    )
