"""Content-addressed embedding reuse and the fleet's pending embedding requests.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        -- One vector per (model, dimension, normalised text): never embedded twice, across
        -- items and datasets. The column is unsized: a model change adds rows, never mixes them.
        CREATE TABLE embedding_vectors (
            model varchar(200) NOT NULL,
            dimension integer NOT NULL,
            text_hash bytea NOT NULL,
            embedding vector NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (model, dimension, text_hash),
            CONSTRAINT ck_embedding_vectors_dimension CHECK (vector_dims(embedding) = dimension)
        );

        -- Texts waiting for a batch. A batch locks its rows (FOR UPDATE SKIP LOCKED) for the
        -- length of its transaction: a killed batch's locks go with its connection, so the
        -- rows are claimed again at once by the next batch.
        CREATE TABLE embedding_requests (
            model varchar(200) NOT NULL,
            dimension integer NOT NULL,
            text_hash bytea NOT NULL,
            text text NOT NULL,
            requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            PRIMARY KEY (model, dimension, text_hash)
        );
        CREATE INDEX ix_embedding_requests_age ON embedding_requests (model, dimension, requested_at);

        -- Which data items use a text's vector: forget deletes a vector (and a pending request)
        -- once no remaining item references it.
        CREATE TABLE embedding_refs (
            model varchar(200) NOT NULL,
            dimension integer NOT NULL,
            text_hash bytea NOT NULL,
            data_item_id uuid NOT NULL REFERENCES data_items(id) ON DELETE CASCADE,
            PRIMARY KEY (model, dimension, text_hash, data_item_id)
        );
        CREATE INDEX ix_embedding_refs_item ON embedding_refs (data_item_id);
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS embedding_refs, embedding_requests, embedding_vectors")
