"""Agentic completion: skills and their procedure history, stored tool specs, skill runs, skill
improvement proposals, and agent traces from decorated producer functions.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE skills (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            name varchar(200) NOT NULL,
            description text NOT NULL DEFAULT '',
            procedure text NOT NULL,
            tools jsonb NOT NULL DEFAULT '[]',
            -- Earlier procedures, oldest first: applying a proposal never loses one.
            history jsonb NOT NULL DEFAULT '[]',
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (dataset_id, name)
        );

        -- Tool specs stored per dataset. `handler` is a key the worker's allow-list must know;
        -- a stored import path is data and is refused at dispatch.
        CREATE TABLE agent_tools (
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            name varchar(200) NOT NULL,
            description text NOT NULL DEFAULT '',
            handler varchar(300) NOT NULL,
            arguments jsonb NOT NULL DEFAULT '{}',
            required jsonb NOT NULL DEFAULT '[]',
            permission varchar(16) NOT NULL CHECK (permission IN ('read', 'write', 'delete', 'share')),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (dataset_id, name)
        );

        CREATE TABLE skill_runs (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            skill_id uuid NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
            user_id uuid REFERENCES users(id) ON DELETE SET NULL,
            task text NOT NULL,
            result_summary text NOT NULL DEFAULT '',
            score double precision CHECK (score IS NULL OR (score >= 0 AND score <= 1)),
            tool_trace jsonb NOT NULL DEFAULT '[]',
            error text,
            started_at timestamptz,
            finished_at timestamptz
        );
        CREATE INDEX ix_skill_runs_skill ON skill_runs (skill_id, finished_at DESC);

        CREATE TABLE skill_proposals (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            skill_id uuid NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
            status varchar(16) NOT NULL CHECK (status IN ('proposed', 'applied', 'superseded')),
            old_procedure text NOT NULL,
            new_procedure text NOT NULL,
            rationale text NOT NULL DEFAULT '',
            confidence double precision NOT NULL,
            run_ids jsonb NOT NULL DEFAULT '[]',
            created_at timestamptz NOT NULL DEFAULT now(),
            applied_at timestamptz
        );

        CREATE TABLE agent_traces (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            user_id uuid REFERENCES users(id) ON DELETE SET NULL,
            session_id varchar(200),
            function varchar(300) NOT NULL,
            inputs text NOT NULL,
            result text,
            error text,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_agent_traces_session ON agent_traces (dataset_id, session_id, created_at DESC);
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS agent_traces, skill_proposals, skill_runs, agent_tools, skills CASCADE;")
