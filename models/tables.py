"""Postgres tables (SQLAlchemy Core). The schema itself is owned by Alembic migrations.

Vector columns are declared without a dimension here: the dimension is fixed by the migration
from settings and recorded in engram_meta, where start-up checks it against the embedder.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    BigInteger,
    FetchedValue,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR, UUID

metadata = MetaData()


def _ts(name: str, **kw) -> Column:
    return Column(name, DateTime(timezone=True), **kw)


def _created() -> Column:
    return _ts("created_at", nullable=False, server_default=func.now())


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
    _created(),
)

datasets = Table(
    "datasets",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("owner_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("settings", JSONB, nullable=False, server_default="{}"),
    _created(),
    UniqueConstraint("owner_id", "name", name="uq_datasets_owner_name"),
)

dataset_grants = Table(
    "dataset_grants",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    # principal is "user:<uuid>" or "role:<name>"
    Column("principal", String(240), primary_key=True),
    Column("permission", String(16), primary_key=True),  # read | write | delete | share
    _created(),
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
    _created(),
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
    _created(),
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
    _created(),
)

# BM25 postings, written in the load transaction (adapters/store/graph.py).
chunk_terms = Table(
    "chunk_terms",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), primary_key=True),
    Column("term", Text, primary_key=True),
    Column("chunk_id", UUID(as_uuid=True), ForeignKey("chunks.id", ondelete="CASCADE"), primary_key=True),
    Column("tf", Integer, nullable=False),
    Column("dl", Integer, nullable=False),
)

entity_types = Table(
    "entity_types",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("name", Text, nullable=False),
    Column("embedding", Vector()),
    _created(),
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
    _created(),
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
    _created(),
    _ts("updated_at", nullable=False, server_default=func.now()),
    _ts("valid_from"),
    _ts("valid_to"),
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
    _ts("valid_from"),
    Column("valid_from_precision", String(5)),
    _ts("valid_to"),
    Column("valid_to_precision", String(5)),
    Column("ended", Boolean, nullable=False, server_default="false"),
    _ts("asserted_at"),
    Column("asserted_precision", String(5)),
    _created(),
    Column("functional", Boolean, nullable=False, server_default="false"),
    _ts("starts_at"),
    _ts("ends_at"),
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
    _created(),
)

pipeline_runs = Table(
    "pipeline_runs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("pipeline", String(64), nullable=False),  # the flow: cognify | maintenance | capture | improve
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE")),
    Column("data_item_id", UUID(as_uuid=True)),
    # pending | running | completed | failed | forgotten; improve also no_op | completed_with_errors |
    # aborted | lost | budget_exhausted
    Column("status", String(32), nullable=False),
    Column("error", Text),
    Column("params", JSONB, nullable=False, server_default="{}"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("llm_calls", Integer, nullable=False, server_default="0"),
    Column("tokens", Integer, nullable=False, server_default="0"),
    _created(),
    _ts("started_at"),
    _ts("finished_at"),
    _ts("heartbeat_at"),
    # An improve run: the claim it runs under (one pass of it), its sessions, fencing number,
    # trigger, the pending-work snapshot it took and its budget.
    Column("claim_id", UUID(as_uuid=True), ForeignKey("improve_claims.id", ondelete="CASCADE")),
    Column("pass", Integer, nullable=False, server_default="1"),
    Column("session_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("fence", BigInteger),
    Column("trigger", String(16)),
    Column("snapshot", JSONB, nullable=False, server_default="{}"),
    Column("budget", JSONB, nullable=False, server_default="{}"),
)

stage_runs = Table(
    "stage_runs",
    metadata,
    Column("run_id", UUID(as_uuid=True), ForeignKey("pipeline_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("stage", String(64), primary_key=True),
    Column("position", Integer, nullable=False),
    # pending | running | completed | failed | skipped | forgotten; improve also not_available |
    # already_completed | fenced_out
    Column("status", String(32), nullable=False),
    Column("fatal", Boolean, nullable=False, server_default="false"),  # improve: its failure aborts the run
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("error", Text),
    Column("reason", Text),
    # The stage's output, so a retried run resumes here instead of redoing the stage.
    Column("output", JSONB),
    Column("llm_calls", Integer, nullable=False, server_default="0"),
    Column("prompt_tokens", Integer, nullable=False, server_default="0"),
    Column("completion_tokens", Integer, nullable=False, server_default="0"),
    _ts("started_at"),
    _ts("finished_at"),
)

session_entries = Table(
    "session_entries",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("session_id", String(200), nullable=False),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("question", Text, nullable=False, server_default=""),
    Column("answer", Text, nullable=False, server_default=""),
    Column("context", Text, nullable=False, server_default=""),
    Column("helpful_count", Integer, nullable=False, server_default="0"),
    Column("harmful_count", Integer, nullable=False, server_default="0"),
    Column("confidence", Float, nullable=False, server_default="1.0"),
    Column("source_chunk_ids", ARRAY(UUID(as_uuid=True)), nullable=False, server_default="{}"),
    Column("source_edge_ids", ARRAY(UUID(as_uuid=True)), nullable=False, server_default="{}"),
    # Monotonic order of arrival: watermarks are "seq <= N", never timestamps.
    Column("seq", BigInteger, nullable=False, server_default=FetchedValue()),
    _created(),
)

# ------------------------------------------------------------------ improve (migration 0003)

# Feedback already folded into chunk/edge feedback weights by the feedback_weights stage.
session_entries.append_column(Column("feedback_applied_helpful", Integer, nullable=False, server_default="0"))
session_entries.append_column(Column("feedback_applied_harmful", Integer, nullable=False, server_default="0"))
session_entries.append_column(_ts("feedback_at"))

session_improve_state = Table(
    "session_improve_state",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("session_id", String(200), primary_key=True),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("watermark_seq", BigInteger, nullable=False, server_default="0"),
    Column("entries_since_improve", Integer, nullable=False, server_default="0"),
    _ts("last_improve_at"),
    Column("auto_requests", Integer, nullable=False, server_default="0"),
    _ts("rerun_requested_at"),
    Column("declined_reason", Text),
    _ts("declined_at"),
    _ts("updated_at", nullable=False, server_default=func.now()),
)

dataset_improve_state = Table(
    "dataset_improve_state",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    _ts("triplet_watermark"),
    _ts("rerun_requested_at"),
    _ts("last_improve_at"),
    _ts("updated_at", nullable=False, server_default=func.now()),
)

improve_fences = Table(
    "improve_fences",
    metadata,
    Column("scope", String(300), primary_key=True),
    Column("fence", BigInteger, nullable=False),
    _ts("updated_at", nullable=False, server_default=func.now()),
)

improve_claims = Table(
    "improve_claims",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("session_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("fence", BigInteger, nullable=False),
    Column("claim_keys", ARRAY(Text), nullable=False),
    Column("claim_value", Text, nullable=False),
    Column("trigger", String(16), nullable=False),
    Column("status", String(16), nullable=False),  # held | released | lost | abandoned
    Column("passes", Integer, nullable=False, server_default="0"),
    _ts("claimed_at", nullable=False, server_default=func.clock_timestamp()),
    _ts("renewed_at", nullable=False, server_default=func.clock_timestamp()),
    _ts("released_at"),
    _ts("lost_at"),
    Column("note", Text),
)

triplet_embeddings = Table(
    "triplet_embeddings",
    metadata,
    Column("edge_id", UUID(as_uuid=True), ForeignKey("edges.id", ondelete="CASCADE"), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("text", Text, nullable=False),
    Column("embedding", Vector()),
    _ts("updated_at", nullable=False, server_default=func.now()),
)

# ------------------------------------------------------------------ distillation, truth (migration 0004)

session_improve_state.append_column(Column("distill_watermark_seq", BigInteger, nullable=False, server_default="0"))

lessons = Table(
    "lessons",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("statement", Text, nullable=False),
    Column("why_learned", Text, nullable=False, server_default=""),
    Column("entities", ARRAY(Text), nullable=False, server_default="{}"),
    Column("member_entry_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("data_item_id", UUID(as_uuid=True), ForeignKey("data_items.id", ondelete="CASCADE")),
    Column("improve_run_id", UUID(as_uuid=True)),
    Column("embedding", Vector()),
    _created(),
)

lesson_decisions = Table(
    "lesson_decisions",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("improve_run_id", UUID(as_uuid=True)),
    Column("working_statement", Text, nullable=False),
    Column("member_entry_ids", ARRAY(Text), nullable=False, server_default="{}"),
    Column("accepted", Boolean, nullable=False),
    Column("reason", String(32)),
    Column("statement", Text, nullable=False, server_default=""),
    Column("why_learned", Text, nullable=False, server_default=""),
    Column("lesson_id", UUID(as_uuid=True)),
    Column("error", Text),
    _created(),
)

user_preferences = Table(
    "user_preferences",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("statement", Text, nullable=False),
    Column("entry_id", UUID(as_uuid=True)),
    _created(),
)

truth_bases = Table(
    "truth_bases",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("epoch", Integer, nullable=False),
    Column("signature", String(64), nullable=False),
    Column("learnings", Integer, nullable=False),
    _ts("built_at", nullable=False, server_default=func.now()),
)

truth_centroids = Table(
    "truth_centroids",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("truth_bases.dataset_id", ondelete="CASCADE"),
           primary_key=True),
    Column("slot", Integer, primary_key=True),
    Column("centroid", ARRAY(Float), nullable=False),
    Column("members", Integer, nullable=False),
)

# ------------------------------------------------------------------ capture lane (migration 0007)

capture_objects = Table(
    "capture_objects",
    metadata,
    # The object's id is its data item's id and its graph node's (entities) id.
    Column("id", UUID(as_uuid=True), ForeignKey("data_items.id", ondelete="CASCADE"), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("title", Text, nullable=False),
    Column("obj_type", String(32), nullable=False),
    Column("project", Text, nullable=False, server_default=""),
    Column("tags", ARRAY(Text), nullable=False, server_default="{}"),
    Column("properties", JSONB, nullable=False, server_default="{}"),
    Column("summary", Text),
    Column("confidence", Float, nullable=False, server_default="0"),
    Column("tier", String(16), nullable=False, server_default="archive"),
    Column("stage", String(16), nullable=False, server_default="ingested"),
    Column("connection_count", Integer, nullable=False, server_default="0"),
    Column("staleness", Float, nullable=False, server_default="0"),
    Column("captured_by", String(64), nullable=False, server_default=""),
    Column("run_id", UUID(as_uuid=True)),
    _created(),
    _ts("updated_at", nullable=False, server_default=func.now()),
)

capture_requests = Table(
    "capture_requests",
    metadata,
    Column("object_id", UUID(as_uuid=True), ForeignKey("capture_objects.id", ondelete="CASCADE"), primary_key=True),
    Column("request", JSONB, nullable=False),
    _created(),
)

# ------------------------------------------------------------------ agentic completion (SPEC 8)

skills = Table(
    "skills",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("procedure", Text, nullable=False),
    Column("tools", JSONB, nullable=False, server_default="[]"),
    Column("history", JSONB, nullable=False, server_default="[]"),
    _created(),
    _ts("updated_at", nullable=False, server_default=func.now()),
    UniqueConstraint("dataset_id", "name"),
)

agent_tools = Table(
    "agent_tools",
    metadata,
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True),
    Column("name", String(200), primary_key=True),
    Column("description", Text, nullable=False, server_default=""),
    Column("handler", String(300), nullable=False),
    Column("arguments", JSONB, nullable=False, server_default="{}"),
    Column("required", JSONB, nullable=False, server_default="[]"),
    Column("permission", String(16), nullable=False),
    _ts("updated_at", nullable=False, server_default=func.now()),
)

skill_runs = Table(
    "skill_runs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("skill_id", UUID(as_uuid=True), ForeignKey("skills.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("task", Text, nullable=False),
    Column("result_summary", Text, nullable=False, server_default=""),
    Column("score", Float),
    Column("tool_trace", JSONB, nullable=False, server_default="[]"),
    Column("error", Text),
    _ts("started_at"),
    _ts("finished_at"),
)

skill_proposals = Table(
    "skill_proposals",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("skill_id", UUID(as_uuid=True), ForeignKey("skills.id", ondelete="CASCADE"), nullable=False),
    Column("status", String(16), nullable=False),  # proposed | applied | superseded
    Column("old_procedure", Text, nullable=False),
    Column("new_procedure", Text, nullable=False),
    Column("rationale", Text, nullable=False, server_default=""),
    Column("confidence", Float, nullable=False),
    Column("run_ids", JSONB, nullable=False, server_default="[]"),
    _created(),
    _ts("applied_at"),
)

agent_traces = Table(
    "agent_traces",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("dataset_id", UUID(as_uuid=True), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", UUID(as_uuid=True), ForeignKey("users.id", ondelete="SET NULL")),
    Column("session_id", String(200)),
    Column("function", String(300), nullable=False),
    Column("inputs", Text, nullable=False),
    Column("result", Text),
    Column("error", Text),
    _created(),
)
