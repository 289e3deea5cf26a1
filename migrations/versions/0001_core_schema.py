"""Core schema: users, datasets, grants, data, documents, chunks, graph, summaries, runs.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _dimension() -> int:
    from engram.settings import get_settings

    return get_settings().embedding_dimension


def upgrade() -> None:
    dim = _dimension()
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        f"""
        CREATE TABLE engram_meta (key varchar(64) PRIMARY KEY, value text NOT NULL);
        INSERT INTO engram_meta (key, value) VALUES ('embedding_dimension', '{dim}');

        CREATE TABLE users (
            id uuid PRIMARY KEY,
            name varchar(200) NOT NULL UNIQUE,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE datasets (
            id uuid PRIMARY KEY,
            name varchar(200) NOT NULL,
            owner_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            settings jsonb NOT NULL DEFAULT '{{}}',
            created_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT uq_datasets_owner_name UNIQUE (owner_id, name)
        );
        CREATE TABLE dataset_grants (
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            principal varchar(240) NOT NULL,
            permission varchar(16) NOT NULL
                CHECK (permission IN ('read', 'write', 'delete', 'share')),
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (dataset_id, principal, permission)
        );
        CREATE TABLE data_items (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            content_hash varchar(64) NOT NULL,
            name text,
            mime varchar(120),
            source text,
            content text NOT NULL,
            node_sets text[] NOT NULL DEFAULT '{{}}',
            importance double precision NOT NULL DEFAULT 0.5,
            created_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT uq_data_items_dataset_hash UNIQUE (dataset_id, content_hash)
        );
        CREATE TABLE documents (
            id uuid PRIMARY KEY,
            data_item_id uuid NOT NULL UNIQUE REFERENCES data_items(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            doc_type varchar(32) NOT NULL,
            title text,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE chunks (
            id uuid PRIMARY KEY,
            document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            chunk_index integer NOT NULL,
            text text NOT NULL,
            token_count integer NOT NULL,
            cut_type varchar(32) NOT NULL,
            embedding vector({dim}),
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
            truth_alignment double precision[],
            truth_epoch integer,
            truth_signature varchar(64),
            importance double precision NOT NULL DEFAULT 0.5,
            feedback_weight double precision NOT NULL DEFAULT 0.5,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_chunks_document ON chunks (document_id);
        CREATE INDEX ix_chunks_dataset ON chunks (dataset_id);
        CREATE INDEX ix_chunks_tsv ON chunks USING gin (tsv);
        CREATE INDEX ix_chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops);

        CREATE TABLE entity_types (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            name text NOT NULL,
            embedding vector({dim}),
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_entity_types_embedding ON entity_types USING hnsw (embedding vector_cosine_ops);

        CREATE TABLE entities (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            name text NOT NULL,
            display_name text NOT NULL,
            type_id uuid REFERENCES entity_types(id) ON DELETE SET NULL,
            description text NOT NULL DEFAULT '',
            embedding vector({dim}),
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_entities_dataset_name ON entities (dataset_id, name);
        CREATE INDEX ix_entities_embedding ON entities USING hnsw (embedding vector_cosine_ops);

        CREATE TABLE edges (
            id uuid PRIMARY KEY,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            source_id uuid NOT NULL,
            target_id uuid NOT NULL,
            relationship varchar(200) NOT NULL,
            properties jsonb NOT NULL DEFAULT '{{}}',
            edge_text text NOT NULL DEFAULT '',
            embedding vector({dim}),
            provenance uuid[] NOT NULL DEFAULT '{{}}',
            feedback_weight double precision NOT NULL DEFAULT 0.5,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            valid_from timestamptz,
            valid_to timestamptz,
            superseded boolean NOT NULL DEFAULT false,
            superseded_by uuid,
            supersession_reason text,
            CONSTRAINT uq_edges_identity UNIQUE (dataset_id, source_id, target_id, relationship)
        );
        CREATE INDEX ix_edges_source ON edges (source_id);
        CREATE INDEX ix_edges_target ON edges (target_id);
        CREATE INDEX ix_edges_provenance ON edges USING gin (provenance);
        CREATE INDEX ix_edges_embedding ON edges USING hnsw (embedding vector_cosine_ops);

        CREATE TABLE summaries (
            id uuid PRIMARY KEY,
            chunk_id uuid NOT NULL UNIQUE REFERENCES chunks(id) ON DELETE CASCADE,
            dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
            text text NOT NULL,
            embedding vector({dim}),
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_summaries_embedding ON summaries USING hnsw (embedding vector_cosine_ops);

        CREATE TABLE pipeline_runs (
            id uuid PRIMARY KEY,
            pipeline varchar(64) NOT NULL,
            dataset_id uuid REFERENCES datasets(id) ON DELETE CASCADE,
            data_item_id uuid,
            status varchar(16) NOT NULL
                CHECK (status IN ('pending', 'running', 'completed', 'failed')),
            error text,
            params jsonb NOT NULL DEFAULT '{{}}',
            attempts integer NOT NULL DEFAULT 0,
            llm_calls integer NOT NULL DEFAULT 0,
            tokens integer NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT now(),
            started_at timestamptz,
            finished_at timestamptz,
            heartbeat_at timestamptz
        );
        CREATE INDEX ix_pipeline_runs_dataset ON pipeline_runs (dataset_id, created_at);
        CREATE INDEX ix_pipeline_runs_open ON pipeline_runs (status) WHERE status IN ('pending', 'running');

        CREATE TABLE stage_runs (
            run_id uuid NOT NULL REFERENCES pipeline_runs(id) ON DELETE CASCADE,
            stage varchar(64) NOT NULL,
            position integer NOT NULL,
            status varchar(16) NOT NULL
                CHECK (status IN ('pending', 'running', 'completed', 'failed', 'skipped')),
            attempts integer NOT NULL DEFAULT 0,
            error text,
            reason text,
            output jsonb,
            llm_calls integer NOT NULL DEFAULT 0,
            prompt_tokens integer NOT NULL DEFAULT 0,
            completion_tokens integer NOT NULL DEFAULT 0,
            started_at timestamptz,
            finished_at timestamptz,
            PRIMARY KEY (run_id, stage)
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE IF EXISTS stage_runs, pipeline_runs, summaries, edges, entities, entity_types,
            chunks, documents, data_items, dataset_grants, datasets, users, engram_meta CASCADE;
        """
    )
