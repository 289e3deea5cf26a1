"""An improve stage as a use case over an in-memory unit of work (cosmicpython style): no
Postgres, no Celery. feedback_weights moves the weights of the sources a verdict cites."""

from __future__ import annotations

import contextlib
import uuid
from types import SimpleNamespace

from engram.pipelines.cognify.flow import COGNIFY
from engram.pipelines.flow import run_inline
from engram.pipelines.ids import preference_id
from engram.pipelines.improve.flow import FEEDBACK_WEIGHTS, UPDATE_USER_PREFERENCES
from engram.tasks.stage_context import Ports
from fake_store import FakeUnitOfWork as FakeStore
from engram.pipelines.improve.stages.feedback import ALPHA

DATASET = uuid.uuid4()
CHUNK, OTHER_CHUNK, EDGE = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()


class FakeSessions:
    def __init__(self, entries: list[dict]):
        self.entries = entries

    def unapplied_feedback(self, dataset_id, session_ids, lock: bool = False) -> list[dict]:
        return [dict(e) for e in self.entries if e["session_id"] in session_ids and (
            e["helpful_count"] != e["feedback_applied_helpful"] or e["harmful_count"] != e["feedback_applied_harmful"])]

    def mark_feedback_applied(self, entries: list[dict]) -> None:
        for applied in entries:
            entry = next(e for e in self.entries if e["id"] == applied["id"])
            entry["feedback_applied_helpful"] = applied["helpful_count"]
            entry["feedback_applied_harmful"] = applied["harmful_count"]


class FakeImprove:
    def __init__(self, weights: dict[str, dict[uuid.UUID, float]]):
        self.tables = weights

    def weights(self, table: str, dataset_id, ids) -> dict[uuid.UUID, float]:
        return {i: w for i, w in self.tables[table].items() if i in set(ids)}

    def set_weights(self, table: str, weights: dict[uuid.UUID, float]) -> None:
        self.tables[table].update(weights)


class FakeUnitOfWork:
    """The repositories the stage uses, kept in memory; counts the units of work opened."""

    def __init__(self, entries: list[dict], weights: dict[str, dict[uuid.UUID, float]]):
        self.sessions, self.improve, self.opened = FakeSessions(entries), FakeImprove(weights), 0

    @contextlib.contextmanager
    def __call__(self):
        self.opened += 1
        yield self


def _entry(seq: int, helpful: int, harmful: int, chunks: list, edges: list) -> dict:
    return {"id": uuid.uuid4(), "session_id": "s1", "seq": seq, "helpful_count": helpful, "harmful_count": harmful,
            "feedback_applied_helpful": 0, "feedback_applied_harmful": 0, "source_chunk_ids": chunks,
            "source_edge_ids": edges}


def _ctx():
    return SimpleNamespace(dataset_id=DATASET, session_ids=["s1"], run_id=uuid.uuid4())


def test_feedback_weights_moves_cited_sources_once_and_marks_the_verdicts_applied():
    uow = FakeUnitOfWork(
        [_entry(1, helpful=1, harmful=0, chunks=[CHUNK], edges=[EDGE]), _entry(2, 0, 1, [CHUNK], [])],
        {"chunks": {CHUNK: 0.5, OTHER_CHUNK: 0.5}, "edges": {EDGE: 0.5}})

    counts = run_inline(FEEDBACK_WEIGHTS, uow, _ctx())

    assert counts == {"entries": 2, "chunks": 1, "edges": 1}
    helped = 1 - 0.5 * (1 - ALPHA)
    assert uow.improve.tables["chunks"][CHUNK] == helped * (1 - ALPHA)  # helpful, then harmful
    assert uow.improve.tables["edges"][EDGE] == helped
    assert uow.improve.tables["chunks"][OTHER_CHUNK] == 0.5  # not cited: untouched
    assert all(e["feedback_applied_helpful"] == e["helpful_count"] for e in uow.sessions.entries)
    # Applied verdicts are not applied again: the gate finds nothing to do.
    assert run_inline(FEEDBACK_WEIGHTS, uow, _ctx()) == ("skipped", "no_new_feedback")
    assert uow.improve.tables["edges"][EDGE] == helped


# ------------------------------------------------------------------ a stage that publishes documents


class FakeWindows:
    def __init__(self, entries: list[dict]):
        self.entries = entries

    def window(self, dataset_id, session_id, after_seq, upto_seq=None):
        return [e for e in self.entries if after_seq < e["seq"] <= (upto_seq or e["seq"])]


class FakeLearning:
    def __init__(self):
        self.preferences: dict[uuid.UUID, dict] = {}

    def user_names(self, user_ids):
        return {u: "alice" for u in user_ids}

    def add_preferences(self, rows):
        added = [r for r in rows if r["id"] not in self.preferences]
        self.preferences.update({r["id"]: r for r in added})
        return added


class RecordingPorts(Ports):
    """The real ports (add_document admits through the intake rule); cognify only recorded."""

    def __init__(self):
        super().__init__(SimpleNamespace(max_content_bytes=10_000), DATASET)
        self.cognified = []

    def write(self):
        raise AssertionError("a stage's compute writes nothing: publish and persist do")

    def cognify(self, run_id, stages):
        self.cognified.append((run_id, stages))


def test_preferences_are_computed_then_published_once_each_and_cognified_by_the_runner():
    user = uuid.uuid4()
    entries = [{"id": uuid.uuid4(), "seq": 1, "user_id": user, "question": "I prefer tea. What is new?"},
               {"id": uuid.uuid4(), "seq": 2, "user_id": user, "question": "I prefer tea."}]
    uow = FakeStore()
    uow.sessions, uow.learning = FakeWindows(entries), FakeLearning()
    ctx = SimpleNamespace(dataset_id=DATASET, session_ids=["s1"], run_id=uuid.uuid4(), ports=RecordingPorts(),
                          settings=SimpleNamespace(max_content_bytes=10_000),
                          snapshot={"sessions": {"s1": {"from": 0, "upto": 2}}})

    assert UPDATE_USER_PREFERENCES.compute(UPDATE_USER_PREFERENCES.load(uow, ctx), ctx) == [
        {"id": preference_id(DATASET, user, "I prefer tea."), "dataset_id": DATASET, "user_id": user,
         "session_id": "s1", "statement": "I prefer tea.", "entry_id": entries[0]["id"]}]
    assert uow.learning.preferences == {} and uow.runs.rows == []  # computing wrote nothing

    counts = run_inline(UPDATE_USER_PREFERENCES, uow, ctx)

    assert counts == {"statements": 1, "new": 1, "documents": 1}
    ((run_id, stages),) = ctx.ports.cognified
    assert run_id == uow.runs.rows[0]["id"] and stages == COGNIFY.stages_for({})[1:]
    (item,) = uow.graph.items.values()
    assert item["content"] == "# User preference (alice)\n\nalice said: I prefer tea.\n"
    assert item["node_sets"] == ["user_preferences", "user_preferences:alice"]
    # Run again over the same window: the statement is known, nothing is published twice.
    assert run_inline(UPDATE_USER_PREFERENCES, uow, ctx) == {"statements": 1, "new": 0, "documents": 0}
    assert len(ctx.ports.cognified) == 1 and len(uow.runs.rows) == 1
