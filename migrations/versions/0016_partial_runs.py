"""A run may end `partial`: some optional stage failed and what it admitted is stored (the
capture lane). Capture runs that completed with a failed stage become partial.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

RUNS = ("pending", "running", "completed", "failed", "forgotten",
        "no_op", "completed_with_errors", "aborted", "lost", "budget_exhausted")
FAILED_STAGE = "EXISTS (SELECT 1 FROM stage_runs s WHERE s.run_id = pipeline_runs.id AND s.status = 'failed')"


def _check(statuses: tuple[str, ...]) -> None:
    op.execute("ALTER TABLE pipeline_runs DROP CONSTRAINT IF EXISTS pipeline_runs_status_check")
    allowed = ", ".join(f"'{s}'" for s in statuses)
    op.execute(f"ALTER TABLE pipeline_runs ADD CONSTRAINT pipeline_runs_status_check CHECK (status IN ({allowed}))")


def upgrade() -> None:
    _check(RUNS + ("partial",))
    op.execute(f"UPDATE pipeline_runs SET status = 'partial' WHERE pipeline = 'capture' AND status = 'completed'"
               f" AND {FAILED_STAGE}")


def downgrade() -> None:
    op.execute("UPDATE pipeline_runs SET status = 'completed' WHERE status = 'partial'")
    _check(RUNS)
