"""Every deterministic id Engram persists: uuid5 ids, so re-running a stage upserts the same rows
and a redelivered message writes once. Ids are persisted: never change a rule's text."""

from __future__ import annotations

import hashlib
import re
import uuid

# Fixed namespace for every Engram id (never change: ids are persisted).
ENGRAM_NAMESPACE = uuid.UUID("6f1d8a2e-4a63-5b7e-9c51-2f7b0c3e9d10")

_SPACES = re.compile(r"\s+")


def normalise_name(name: str) -> str:
    """Entity/type name rule: lower-case, whitespace -> "_", apostrophes dropped."""
    name = name.strip().lower().replace("'", "").replace("\u2019", "")
    return _SPACES.sub("_", name)


def normalise_relationship(name: str) -> str:
    """Relationship names are lower_snake: non-alphanumerics collapse to one underscore."""
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name.strip()).strip("_").lower()
    return name or "related_to"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def dataset_id(owner_id: uuid.UUID, name: str) -> uuid.UUID:
    return uuid.uuid5(ENGRAM_NAMESPACE, f"Dataset:{owner_id}:{name}")


def user_id(name: str) -> uuid.UUID:
    return uuid.uuid5(ENGRAM_NAMESPACE, f"User:{name}")


def data_item_id(dataset: uuid.UUID, digest: str) -> uuid.UUID:
    return uuid.uuid5(dataset, f"DataItem:{digest}")


def document_id(data_item: uuid.UUID) -> uuid.UUID:
    return uuid.uuid5(data_item, "Document")


def chunk_id(document: uuid.UUID, index: int) -> uuid.UUID:
    return uuid.uuid5(ENGRAM_NAMESPACE, f"{document}-{index}")


def window_id(chunk: uuid.UUID, width: int, start: int) -> uuid.UUID:
    """A conversation chunk's window of `width` turns from its line `start`."""
    return uuid.uuid5(chunk, f"Window-{width}-{start}")


def summary_id(chunk: uuid.UUID) -> uuid.UUID:
    return uuid.uuid5(chunk, "TextSummary")


def entity_id(dataset: uuid.UUID, name: str) -> uuid.UUID:
    return uuid.uuid5(dataset, f"Entity:{normalise_name(name)}")


def entity_type_id(dataset: uuid.UUID, name: str) -> uuid.UUID:
    return uuid.uuid5(dataset, f"EntityType:{normalise_name(name)}")


def edge_id(dataset: uuid.UUID, source: uuid.UUID, target: uuid.UUID, relationship: str) -> uuid.UUID:
    """Edge identity is (source, target, relationship) within a dataset."""
    return uuid.uuid5(dataset, f"Edge:{source}:{target}:{normalise_relationship(relationship)}")


def interval_id(edge: uuid.UUID, chunk: uuid.UUID | None, ordinal: int = 0) -> uuid.UUID:
    """One validity interval of an edge: the ordinal-th statement of it in that chunk."""
    return uuid.uuid5(edge, f"Interval:{chunk}:{ordinal}")


def local_entity_id(entity: uuid.UUID, local_id: str) -> uuid.UUID:
    """A second node of one name in one chunk: the LLM says it is another thing (two "Jordan"s)."""
    return uuid.uuid5(entity, f"Local:{local_id}")


def skill_id(dataset: uuid.UUID, name: str) -> uuid.UUID:
    return uuid.uuid5(dataset, f"Skill:{name.strip()}")


def skill_run_id(request_id: str, skill: str) -> uuid.UUID:
    """One SkillRun per (recall delivery, skill): a redelivered recall records it once."""
    return uuid.uuid5(ENGRAM_NAMESPACE, f"SkillRun:{request_id}:{skill}")


def remembered_entry_id(task_id: str) -> uuid.UUID:
    """The session entry of one engram.remember delivery (its Celery task id)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"engram-session-entry:{task_id}")


def recall_entry_id(request_id: str) -> uuid.UUID:
    """The session entry of one engram.recall delivery (its Celery task id)."""
    return uuid.uuid5(ENGRAM_NAMESPACE, f"RecallSessionEntry:{request_id}")


def trace_entry_id(trace_id: uuid.UUID) -> uuid.UUID:
    """The session entry an agent trace becomes: persisting a trace twice stores it once."""
    return uuid.uuid5(ENGRAM_NAMESPACE, f"AgentTraceEntry:{trace_id}")


def preference_key(statement: str) -> str:
    """Two preference sentences are one preference when they differ in spacing, case or a final "."/"!"."""
    return _SPACES.sub(" ", statement).strip().casefold().rstrip(".!")


def preference_id(dataset: uuid.UUID, user: uuid.UUID, statement: str) -> uuid.UUID:
    return uuid.uuid5(ENGRAM_NAMESPACE, f"Preference:{dataset}:{user}:{preference_key(statement)}")


def statement_key(statement: str) -> str:
    """Two lesson statements are one lesson when they differ in spacing, case or a final "."."""
    return _SPACES.sub(" ", statement or "").strip().casefold().rstrip(".").strip()


def lesson_id(dataset: uuid.UUID, statement: str) -> uuid.UUID:
    return uuid.uuid5(ENGRAM_NAMESPACE, f"Lesson:{dataset}:{statement_key(statement)}")


def lesson_decision_id(run: uuid.UUID, session_id: str, working_statement: str) -> uuid.UUID:
    """One curation decision of an improve run about one session's proposed lesson."""
    return uuid.uuid5(ENGRAM_NAMESPACE, f"LessonDecision:{run}:{session_id}:{statement_key(working_statement)}")


def learning_id(text: str) -> uuid.UUID:
    """A truth-subspace learning, by its normalised text (pipelines/improve/truth.normalise)."""
    return uuid.uuid5(ENGRAM_NAMESPACE, "TruthLearning:" + text)
