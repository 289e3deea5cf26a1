"""Access (users, datasets, grants) and the knowledge graph: items, documents, chunks and their
terms, entities, edges, intervals, summaries."""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Integer,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR, UUID

from engram.models.tables.base import created_column, ts_column, metadata


engram_meta = Table(
    "engram_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

users = Table(
    "users",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    created_column(),
)

datasets = Table(
    "datasets",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("settings", JSONB, nullable=False, server_default="{}"),
    created_column(),
    UniqueConstraint("owner_id", "name", name="uq_datasets_owner_name"),
)

dataset_grants = Table(
    "dataset_grants",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    # principal is "user:<uuid>" or "role:<name>"
    Column("principal", String(240), primary_key=True),
    Column("permission", String(16), primary_key=True),  # read | write | delete | share
    created_column(),
)

data_items = Table(
    "data_items",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("name", Text),
    Column("mime", String(120)),
    Column("source", Text),
    Column("content", Text, nullable=False),
    Column("node_sets", ARRAY(Text), nullable=False, server_default="{}"),
    Column("importance", Float, nullable=False, server_default="0.5"),
    created_column(),
    UniqueConstraint("dataset_id", "content_hash", name="uq_data_items_dataset_hash"),
)

documents = Table(
    "documents",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("data_item_id", UUID(as_uuid=True), ForeignKey("data_items.id", ondelete="CASCADE"), nullable=False, unique=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("doc_type", String(32), nullable=False),
    Column("title", Text),
    created_column(),
)

chunks = Table(
    "chunks",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("document_id", UUID(as_uuid=True), ForeignKey("documents.id", ondelete="CASCADE"), nullable=False),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("chunk_index", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("token_count", Integer, nullable=False),
    Column("cut_type", String(32), nullable=False),
    Column("embedding", Vector()),
    Column("tsv", TSVECTOR),  # generated column, see migration
    Column("truth_alignment", ARRAY(Float)),
    Column("truth_epoch", Integer),
    Column("truth_signature", String(64)),
    Column("importance", Float, nullable=False, server_default="0.5"),
    Column("feedback_weight", Float, nullable=False, server_default="0.5"),
    Column("lex_length", Integer),  # BM25 document length in terms (migration 0004)
    Column("years", ARRAY(Integer)),  # years the text names, GIN-indexed for TEMPORAL
    created_column(),
    # A conversation's chunk (migration 0014; NULL otherwise): its session's time, who speaks in
    # it, the relative phrases' absolute dates [{phrase, start, end, turn}], turns and participants.
    ts_column("occurred_at"),
    Column("speakers", ARRAY(Text)),
    Column("dates", JSONB(none_as_null=True)),
    Column("conversation", JSONB(none_as_null=True)),
)

# BM25 postings, written in the load transaction (adapters/store/graph.py). The key's index
# carries tf and dl (migration 0018): BM25 reads a term's postings from the index alone. Their
# per-dataset statistics (chunk_lex_stats, chunk_term_df) belong to migration 0020's triggers and
# are not declared here: nothing but those triggers writes them, and an export leaves them out.
chunk_terms = Table(
    "chunk_terms",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), primary_key=True),
    Column("term", Text, primary_key=True),
    Column("chunk_id", UUID(as_uuid=True), ForeignKey("chunks.id", ondelete="CASCADE"), primary_key=True),
    Column("tf", Integer, nullable=False),
    Column("dl", Integer, nullable=False),
)

# A conversation chunk's turn windows (pipelines/cognify/windows.py; migration 0015): vectors of
# runs of 2 and 3 turns, no text (a window is its chunk's lines start .. start + width).
chunk_windows = Table(
    "chunk_windows",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("chunk_id", UUID(as_uuid=True), ForeignKey("chunks.id", ondelete="CASCADE"), nullable=False),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("document_id", UUID(as_uuid=True), nullable=False),
    Column("width", SmallInteger, nullable=False),
    Column("start", SmallInteger, nullable=False),
    Column("embedding", Vector()),
)

entity_types = Table(
    "entity_types",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("name", Text, nullable=False),
    Column("embedding", Vector()),
    created_column(),
)

entities = Table(
    "entities",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("name", Text, nullable=False),
    Column("display_name", Text, nullable=False),
    Column("type_id", UUID(as_uuid=True), ForeignKey("entity_types.id", ondelete="SET NULL")),
    Column("description", Text, nullable=False, server_default=""),
    Column("embedding", Vector()),
    created_column(),
)

edges = Table(
    "edges",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    # Endpoints are entities or chunks (a chunk `contains` its entities): no foreign keys.
    Column("source_id", UUID(as_uuid=True), nullable=False),
    Column("target_id", UUID(as_uuid=True), nullable=False),
    Column("relationship", String(200), nullable=False),
    Column("properties", JSONB, nullable=False, server_default="{}"),
    Column("edge_text", Text, nullable=False, server_default=""),
    Column("embedding", Vector()),
    Column("provenance", ARRAY(UUID(as_uuid=True)), nullable=False, server_default="{}"),
    Column("feedback_weight", Float, nullable=False, server_default="0.5"),
    created_column(),
    ts_column("updated_at", nullable=False, server_default=func.now()),
    ts_column("valid_from"),
    ts_column("valid_to"),
    Column("superseded", Boolean, nullable=False, server_default="false"),
    Column("superseded_by", UUID(as_uuid=True)),
    Column("supersession_reason", Text),
    UniqueConstraint("dataset_id", "source_id", "target_id", "relationship", name="uq_edges_identity"),
)

# Validity intervals of facts: one row per statement of an edge (re-assertion adds a row).
# Stated columns come from extraction; starts_at / ends_at / superseded_by are the effective
# interval the supersession pass computed (functional relationships) or the stated one.
edge_intervals = Table(
    "edge_intervals",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("edge_id", UUID(as_uuid=True), ForeignKey("edges.id", ondelete="CASCADE"), nullable=False),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("chunk_id", UUID(as_uuid=True), ForeignKey("chunks.id", ondelete="CASCADE")),
    ts_column("valid_from"),
    Column("valid_from_precision", String(5)),
    ts_column("valid_to"),
    Column("valid_to_precision", String(5)),
    Column("ended", Boolean, nullable=False, server_default="false"),
    ts_column("asserted_at"),
    Column("asserted_precision", String(5)),
    created_column(),
    Column("functional", Boolean, nullable=False, server_default="false"),
    ts_column("starts_at"),
    ts_column("ends_at"),
    Column("superseded_by", UUID(as_uuid=True)),
)

summaries = Table(
    "summaries",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("chunk_id", UUID(as_uuid=True), ForeignKey("chunks.id", ondelete="CASCADE"), nullable=False, unique=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("text", Text, nullable=False),
    Column("embedding", Vector()),
    created_column(),
)
