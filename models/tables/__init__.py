"""Postgres tables (SQLAlchemy Core), one module per domain. The schema itself is owned by
Alembic migrations.

Vector columns are declared without a dimension here: the dimension is fixed by the migration
from settings and recorded in engram_meta, where start-up checks it against the embedder.
"""

from engram.models.tables.base import (
    metadata,
)
from engram.models.tables.graph import (
    engram_meta,
    users,
    datasets,
    dataset_grants,
    data_items,
    documents,
    chunks,
    chunk_terms,
    chunk_windows,
    entity_types,
    entities,
    edges,
    edge_intervals,
    summaries,
)
from engram.models.tables.runs import (
    pipeline_runs,
    stage_runs,
)
from engram.models.tables.improve import (
    session_entries,
    session_improve_state,
    dataset_improve_state,
    improve_fences,
    improve_claims,
    triplet_embeddings,
)
from engram.models.tables.learning import (
    lessons,
    lesson_decisions,
    user_preferences,
    truth_bases,
    truth_centroids,
)
from engram.models.tables.capture import (
    capture_objects,
    capture_requests,
)
from engram.models.tables.agentic import (
    skills,
    agent_tools,
    skill_runs,
    skill_proposals,
    agent_traces,
)

__all__ = [
    "agent_tools",
    "agent_traces",
    "capture_objects",
    "capture_requests",
    "chunk_terms",
    "chunk_windows",
    "chunks",
    "data_items",
    "dataset_grants",
    "dataset_improve_state",
    "datasets",
    "documents",
    "edge_intervals",
    "edges",
    "engram_meta",
    "entities",
    "entity_types",
    "improve_claims",
    "improve_fences",
    "lesson_decisions",
    "lessons",
    "metadata",
    "pipeline_runs",
    "session_entries",
    "session_improve_state",
    "skill_proposals",
    "skill_runs",
    "skills",
    "stage_runs",
    "summaries",
    "triplet_embeddings",
    "truth_bases",
    "truth_centroids",
    "user_preferences",
    "users",
]
