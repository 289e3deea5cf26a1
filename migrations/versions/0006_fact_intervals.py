"""Validity intervals of facts (issue 15): one row per statement of an edge, so a re-asserted
fact keeps every interval ("mayor 2015-2022; again since 2026").

Existing fact edges get one interval from their own valid_from / valid_to, keyed like the
ones extraction writes (edge, first source chunk, 0), so re-ingesting a document updates it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

import uuid

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE edge_intervals (
            id uuid PRIMARY KEY,
            edge_id uuid NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            chunk_id uuid REFERENCES chunks(id) ON DELETE CASCADE,
            valid_from timestamptz,
            valid_from_precision varchar(5),
            valid_to timestamptz,
            valid_to_precision varchar(5),
            ended boolean NOT NULL DEFAULT false,
            asserted_at timestamptz,
            asserted_precision varchar(5),
            created_at timestamptz NOT NULL DEFAULT now(),
            functional boolean NOT NULL DEFAULT false,
            starts_at timestamptz,
            ends_at timestamptz,
            superseded_by uuid
        );
        CREATE INDEX ix_edge_intervals_edge ON edge_intervals (edge_id);
        CREATE INDEX ix_edge_intervals_chunk ON edge_intervals (chunk_id);
        """
    )
    bind = op.get_bind()
    rows = bind.exec_driver_sql(
        "SELECT g.id, g.dataset_id, g.provenance[1], g.valid_from, g.valid_to, g.superseded FROM edges g"
        " JOIN chunks c ON c.id = g.provenance[1]"
        " WHERE g.relationship NOT IN ('contains', 'contradicts')"
    ).all()
    for edge, dataset, chunk, valid_from, valid_to, superseded in rows:
        # The old rule dated an edge 1 January of a year: that is a year, not a day.
        precision = None if valid_from is None else (
            "year" if (valid_from.month, valid_from.day) == (1, 1) else "day")
        bind.exec_driver_sql(
            "INSERT INTO edge_intervals (id, edge_id, dataset_id, chunk_id, valid_from, valid_from_precision,"
            " asserted_at, asserted_precision, functional, starts_at, ends_at)"
            " VALUES (%(id)s, %(e)s, %(d)s, %(c)s, %(f)s, %(p)s, %(f)s, %(p)s, %(s)s, %(f)s, %(t)s)",
            {"id": uuid.uuid5(edge, f"Interval:{chunk}:0"), "e": edge, "d": dataset, "c": chunk,
             "f": valid_from, "p": precision, "s": bool(superseded), "t": valid_to},
        )


def downgrade() -> None:
    op.execute("DROP TABLE edge_intervals")
