"""One run bookkeeping for every flow: improve runs and their stages move into pipeline_runs /
stage_runs (pipeline 'improve'); improve_runs and improve_stage_runs are dropped.

An improve run keeps its claim, pass, sessions, fence, trigger, snapshot and budget as columns
of its run row; a stage keeps `fatal`, and its counts become the stage's output.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

RUNS = ("pending", "running", "completed", "failed", "forgotten")
STAGES = ("pending", "running", "completed", "failed", "skipped", "forgotten")
IMPROVE_RUNS = ("no_op", "completed_with_errors", "aborted", "lost", "budget_exhausted")
IMPROVE_STAGES = ("not_available", "already_completed", "fenced_out")


def _check(table: str, statuses: tuple[str, ...]) -> None:
    op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_status_check")
    allowed = ", ".join(f"'{s}'" for s in statuses)
    op.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_status_check CHECK (status IN ({allowed}))")


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE pipeline_runs ALTER COLUMN status TYPE varchar(32),
            ADD COLUMN claim_id uuid REFERENCES improve_claims(id) ON DELETE CASCADE,
            ADD COLUMN pass integer NOT NULL DEFAULT 1,
            ADD COLUMN session_ids text[] NOT NULL DEFAULT '{}',
            ADD COLUMN fence bigint,
            ADD COLUMN trigger varchar(16),
            ADD COLUMN snapshot jsonb NOT NULL DEFAULT '{}',
            ADD COLUMN budget jsonb NOT NULL DEFAULT '{}';
        ALTER TABLE stage_runs ALTER COLUMN status TYPE varchar(32),
            ADD COLUMN fatal boolean NOT NULL DEFAULT false;
        CREATE INDEX ix_pipeline_runs_claim ON pipeline_runs (claim_id) WHERE claim_id IS NOT NULL;
        """
    )
    _check("pipeline_runs", RUNS + IMPROVE_RUNS)
    _check("stage_runs", STAGES + IMPROVE_STAGES)
    op.execute(
        """
        INSERT INTO pipeline_runs (id, pipeline, dataset_id, status, error, llm_calls, tokens, created_at,
                                   started_at, finished_at, claim_id, pass, session_ids, fence, trigger, snapshot,
                                   budget)
        SELECT id, 'improve', dataset_id, status, error, llm_calls, tokens, created_at, created_at, finished_at,
               claim_id, pass, session_ids, fence, trigger, snapshot, budget
        FROM improve_runs;
        INSERT INTO stage_runs (run_id, stage, position, fatal, status, reason, error, output, attempts, llm_calls,
                                prompt_tokens, completion_tokens, started_at, finished_at)
        SELECT run_id, stage, position, fatal, status, reason, error, counts, attempts, llm_calls, prompt_tokens,
               completion_tokens, started_at, finished_at
        FROM improve_stage_runs;
        DROP TABLE improve_stage_runs, improve_runs;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        CREATE TABLE improve_runs (
            id uuid PRIMARY KEY,
            claim_id uuid REFERENCES improve_claims(id) ON DELETE CASCADE,
            pass integer NOT NULL DEFAULT 1,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            session_ids text[] NOT NULL DEFAULT '{}',
            fence bigint,
            trigger varchar(16) NOT NULL,
            status varchar(32) NOT NULL,
            snapshot jsonb NOT NULL DEFAULT '{}',
            budget jsonb NOT NULL DEFAULT '{}',
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
            counts jsonb NOT NULL DEFAULT '{}',
            attempts integer NOT NULL DEFAULT 0,
            llm_calls integer NOT NULL DEFAULT 0,
            prompt_tokens integer NOT NULL DEFAULT 0,
            completion_tokens integer NOT NULL DEFAULT 0,
            started_at timestamptz,
            finished_at timestamptz,
            PRIMARY KEY (run_id, stage)
        );
        INSERT INTO improve_runs (id, claim_id, pass, dataset_id, session_ids, fence, trigger, status, snapshot,
                                  budget, llm_calls, tokens, error, created_at, finished_at)
        SELECT id, claim_id, pass, dataset_id, session_ids, fence, trigger, status, snapshot, budget, llm_calls,
               tokens, error, created_at, finished_at
        FROM pipeline_runs WHERE pipeline = 'improve';
        INSERT INTO improve_stage_runs (run_id, stage, position, fatal, status, reason, error, counts, attempts,
                                        llm_calls, prompt_tokens, completion_tokens, started_at, finished_at)
        SELECT s.run_id, s.stage, s.position, s.fatal, s.status, s.reason, s.error, coalesce(s.output, '{}'),
               s.attempts, s.llm_calls, s.prompt_tokens, s.completion_tokens, s.started_at, s.finished_at
        FROM stage_runs s JOIN pipeline_runs r ON r.id = s.run_id WHERE r.pipeline = 'improve';
        DELETE FROM pipeline_runs WHERE pipeline = 'improve';
        DROP INDEX IF EXISTS ix_pipeline_runs_claim;
        ALTER TABLE stage_runs DROP COLUMN fatal;
        ALTER TABLE pipeline_runs DROP COLUMN claim_id, DROP COLUMN pass, DROP COLUMN session_ids,
            DROP COLUMN fence, DROP COLUMN trigger, DROP COLUMN snapshot, DROP COLUMN budget;
        """
    )
    _check("pipeline_runs", RUNS)
    _check("stage_runs", STAGES)
    op.execute("ALTER TABLE pipeline_runs ALTER COLUMN status TYPE varchar(16)")
    op.execute("ALTER TABLE stage_runs ALTER COLUMN status TYPE varchar(16)")
