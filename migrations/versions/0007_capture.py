"""Capture lane (SPEC 9): typed knowledge objects and the requests that created them.

An object is also a data item (its text is a chunk, found by recall) and a graph node (an
entities row with the same id); its relationships are ordinary edges.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE capture_objects (
            id uuid PRIMARY KEY REFERENCES data_items(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            title text NOT NULL,
            obj_type varchar(32) NOT NULL,
            project text NOT NULL DEFAULT '',
            tags text[] NOT NULL DEFAULT '{}',
            properties jsonb NOT NULL DEFAULT '{}',
            summary text,
            confidence double precision NOT NULL DEFAULT 0,
            tier varchar(16) NOT NULL DEFAULT 'archive',
            stage varchar(16) NOT NULL DEFAULT 'ingested',
            connection_count integer NOT NULL DEFAULT 0,
            staleness double precision NOT NULL DEFAULT 0,
            captured_by varchar(64) NOT NULL DEFAULT '',
            run_id uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_capture_objects_recent ON capture_objects (dataset_id, created_at DESC);
        CREATE INDEX ix_capture_objects_type ON capture_objects (dataset_id, obj_type);
        CREATE INDEX ix_capture_objects_project ON capture_objects (dataset_id, project);
        CREATE INDEX ix_capture_objects_tags ON capture_objects USING gin (tags);

        -- What the caller sent (entities, properties, template, summary): reprocess restores it.
        CREATE TABLE capture_requests (
            object_id uuid PRIMARY KEY REFERENCES capture_objects(id) ON DELETE CASCADE,
            request jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DELETE FROM edges g USING capture_objects o WHERE g.source_id = o.id OR g.target_id = o.id;
        DELETE FROM entities e USING capture_objects o WHERE e.id = o.id;
        DROP TABLE capture_requests;
        DROP TABLE capture_objects;
        """
    )
