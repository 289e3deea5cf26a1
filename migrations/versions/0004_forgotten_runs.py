"""A forgotten item's runs stay as tombstones with status `forgotten` (outputs erased).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

RUNS = ("pending", "running", "completed", "failed")
STAGES = ("pending", "running", "completed", "failed", "skipped")


def _check(table: str, statuses: tuple[str, ...]) -> None:
    op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_status_check")
    allowed = ", ".join(f"'{s}'" for s in statuses)
    op.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_status_check CHECK (status IN ({allowed}))")


def upgrade() -> None:
    _check("pipeline_runs", RUNS + ("forgotten",))
    _check("stage_runs", STAGES + ("forgotten",))


def downgrade() -> None:
    # Tombstones become failed runs (their data is gone either way).
    op.execute("UPDATE stage_runs SET status = 'failed' WHERE status = 'forgotten'")
    op.execute("UPDATE pipeline_runs SET status = 'failed', error = 'forgotten' WHERE status = 'forgotten'")
    _check("pipeline_runs", RUNS)
    _check("stage_runs", STAGES)
