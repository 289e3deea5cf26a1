"""The intake rule (pipelines/intake.py) over an in-memory unit of work: every latest-run status
x redelivered x the same content twice in one call, as the module's decision table says."""

from __future__ import annotations

import itertools
import uuid
from types import SimpleNamespace

import pytest

from engram.pipelines import ids
from engram.pipelines.cognify.flow import COGNIFY
from engram.pipelines.cognify.ingest import PreparedItem
from engram.pipelines.improve.stages import qa
from engram.pipelines.intake import Intake, admit, writable_dataset
from fake_store import FakeUnitOfWork

DATASET = uuid.uuid4()
STAGES = COGNIFY.stages_for({})  # add, classify, chunk, extract_graph_and_summarize, embed_and_load
ITEM = PreparedItem(name="note.md", mime="text/markdown", source=None, doc_type="text", digest="d" * 64,
                    text="Alice works at Harbor Dynamics.")
ITEM_ID = ids.data_item_id(DATASET, ITEM.digest)


# What each earlier state leaves: the item stored (or not: forget deletes it) and its latest run.
STAGE_STATES = {
    "pending": ["completed", "pending", "pending", "pending", "pending"],
    "running": ["completed", "completed", "running", "pending", "pending"],
    "completed": ["completed"] * 5,
    "failed": ["completed", "completed", "failed", "pending", "pending"],
    "forgotten": ["completed", "completed", "forgotten", "forgotten", "forgotten"],
}


def _uow_with(previous: str | None) -> tuple[FakeUnitOfWork, uuid.UUID | None]:
    uow = FakeUnitOfWork()
    if previous is None:
        return uow, None
    run_id = uuid.uuid4()
    if previous != "forgotten":  # a forgotten item's row is gone; its run stays as a tombstone
        uow.graph.add_items(DATASET, [{"digest": ITEM.digest, "content": ITEM.text}])
    uow.runs.rows.append({"id": run_id, "data_item_id": ITEM_ID, "status": previous, "params": {}, "done": {},
                          "stages": [{"stage": s, "status": st} for s, st in zip(STAGES, STAGE_STATES[previous])]})
    return uow, run_id


NEW = ("new", "pending", STAGES[1:])
# previous status, redelivered -> (decision, reported status, stages this call starts)
TABLE = {
    (None, False): NEW,
    (None, True): NEW,
    ("forgotten", False): NEW,
    ("forgotten", True): NEW,
    ("pending", False): ("leave", "pending", []),
    ("pending", True): ("resume", "pending", STAGES[1:]),
    ("running", False): ("leave", "running", []),
    ("running", True): ("leave", "running", []),
    ("completed", False): ("leave", "completed", []),
    ("completed", True): ("leave", "completed", []),
    ("failed", False): ("reopen", "pending", STAGES[2:]),
    ("failed", True): ("reopen", "pending", STAGES[2:]),
}


CASES = [(p, r, t) for (p, r), t in itertools.product(TABLE, (False, True))]


@pytest.mark.parametrize("previous,redelivered,twice", CASES)
def test_each_item_gets_one_decision_by_its_latest_run(previous, redelivered, twice):
    uow, old_run = _uow_with(previous)
    decision, status, starts = TABLE[(previous, redelivered)]

    admission = admit(uow, Intake(DATASET, [ITEM, ITEM] if twice else [ITEM], redelivered=redelivered))

    first = admission.items[0]
    assert (first.decision, first.status, list(first.stages)) == (decision, status, starts)
    assert first.data_item_id == ITEM_ID and first.name == ITEM.name
    assert first.duplicate is (decision != "new")
    if decision == "new":
        assert first.run_id != old_run and admission.new_runs == 1
        assert uow.runs.latest_for_item(ITEM_ID)["id"] == first.run_id
    else:
        assert first.run_id == old_run and admission.new_runs == 0
    if twice:  # the second copy rides on the first's run: reported a duplicate, started nothing more
        second = admission.items[1]
        assert (second.run_id, second.decision, second.status, second.stages) == (first.run_id, "reuse", status, ())
        assert second.duplicate
    assert len(admission.items) == (2 if twice else 1)
    assert admission.to_start == ([(first.run_id, starts)] if starts else [])
    kept_old = previous is not None and decision == "new"  # the tombstone stays beside the new run
    assert len(uow.graph.items) == 1 and len(uow.runs.rows) == (2 if kept_old else 1)
    assert uow.runs.latest_for_item(ITEM_ID)["status"] == ("pending" if decision in ("new", "reopen") else previous)


@pytest.mark.parametrize("redelivered", [False, True])
def test_a_forgotten_run_is_never_reopened_even_when_its_item_is_stored(redelivered):
    uow, tombstone = _uow_with("forgotten")
    uow.graph.add_items(DATASET, [{"digest": ITEM.digest, "content": ITEM.text}])
    admission = admit(uow, Intake(DATASET, [ITEM], redelivered=redelivered))
    (new,) = admission.items
    assert (new.decision, new.status, list(new.stages)) == ("new", "pending", STAGES[1:]) and new.run_id != tombstone
    assert uow.runs.rows[-1]["done"][STAGES[0]]["duplicate"] is True  # the add found the content stored
    assert uow.runs.rows[0]["status"] == "forgotten"


def test_a_new_run_records_add_done_with_the_items_params_and_the_callers():
    uow = FakeUnitOfWork()
    admission = admit(uow, Intake(DATASET, [ITEM], options={"contradiction_check": True}, params={"improve_run": "r1"},
                                  node_sets=["user_sessions"], importance=0.9))
    row = uow.runs.rows[0]
    assert row["params"] == {"options": {"contradiction_check": True}, "improve_run": "r1", "doc_type": "text",
                             "name": "note.md"}
    assert row["done"] == {STAGES[0]: {"data_item_id": str(ITEM_ID), "duplicate": False}}
    assert [s["stage"] for s in row["stages"]] == COGNIFY.stages_for({"contradiction_check": True})
    assert admission.to_start == [(row["id"], COGNIFY.stages_for({"contradiction_check": True})[1:])]
    assert uow.graph.items[ITEM_ID]["node_sets"] == ["user_sessions"] and uow.graph.items[ITEM_ID]["importance"] == 0.9


def test_different_items_in_one_call_are_decided_each_in_request_order():
    other = PreparedItem(name=None, mime=None, source=None, doc_type="text", digest="e" * 64, text="Bob.")
    uow, old_run = _uow_with("completed")
    admission = admit(uow, Intake(DATASET, [other, ITEM, other]))
    assert [a.decision for a in admission.items] == ["new", "leave", "reuse"]
    assert admission.items[1].run_id == old_run and admission.items[2].run_id == admission.items[0].run_id
    assert admission.to_start == [(admission.items[0].run_id, STAGES[1:])]


def test_nothing_to_admit_writes_nothing():
    uow = FakeUnitOfWork()
    admission = admit(uow, Intake(DATASET, []))
    assert (admission.items, admission.to_start, uow.graph.items, uow.runs.rows) == ([], [], {}, [])


def test_writable_dataset_creates_the_callers_own_only_when_asked():
    uow = FakeUnitOfWork()
    with pytest.raises(LookupError, match="does not exist"):
        writable_dataset(uow, "notes", "alice", create=False)
    assert uow.access.own == set()
    assert writable_dataset(uow, "notes", "alice", create=True) == ids.dataset_id(ids.user_id("alice"), "notes")
    assert writable_dataset(uow, "notes", "alice", create=False) == ids.dataset_id(ids.user_id("alice"), "notes")


@pytest.mark.parametrize("request_,expected", [
    (SimpleNamespace(retries=0, delivery_info={"redelivered": False}), False),
    (SimpleNamespace(retries=None, delivery_info=None), False),
    (SimpleNamespace(retries=1, delivery_info={}), True),
    (SimpleNamespace(retries=0, delivery_info={"redelivered": True}), True),
])
def test_a_retry_or_a_broker_redelivery_counts_as_redelivered(request_, expected):
    from engram.tasks.base import redelivered

    assert redelivered(request_) is expected



# ------------------------------------------------------------------ a caller: persist_session_qa


class FakePorts:
    def __init__(self, uow: FakeUnitOfWork):
        self.uow, self.cognified = uow, []

    def cognify(self, run_id, stages):
        self.cognified.append((run_id, stages))


def _qa_ctx(uow: FakeUnitOfWork):
    return SimpleNamespace(dataset_id=DATASET, run_id=uuid.uuid4(), settings=SimpleNamespace(max_content_bytes=1000),
                           ports=FakePorts(uow))


def _qa(windows, ctx, uow) -> dict:
    """The stage as the runner runs it: compute (writes nothing), publish, cognify what it started."""
    result = qa.compute(windows, ctx)
    published = qa.publish(uow, ctx, windows, result)
    for run_id, stages in published.runs:
        ctx.ports.cognify(run_id, stages)
    return published.result


def _turn(seq: int, question: str, answer: str = "Teal.") -> dict:
    return {"id": uuid.uuid4(), "seq": seq, "question": question, "answer": answer, "context": ""}


def test_session_qa_cognifies_each_new_document_once_and_resumes_one_an_earlier_attempt_left():
    uow = FakeUnitOfWork()
    ctx = _qa_ctx(uow)
    windows = {"s1": [_turn(1, "Logo colour?"), _turn(2, "Logo colour?"), _turn(3, "x" * 2000)]}

    result = qa.compute(windows, ctx)
    assert uow.runs.rows == [] and uow.graph.items == {}  # computing wrote nothing
    published = qa.publish(uow, ctx, windows, result)
    for run_id, stages in published.runs:
        ctx.ports.cognify(run_id, stages)
    counts = published.result

    # The same turn twice is one document, cognified once; a turn over the size limit is none.
    assert counts == {"entries": 3, "documents": 1, "duplicates": 1, "rejected": 1}
    ((run_id, stages),) = ctx.ports.cognified
    assert stages == STAGES[1:] and uow.runs.rows[0]["params"]["improve_run"] == str(ctx.run_id)
    # The attempt died before its inline cognify started: the next attempt runs the same run.
    again = _qa_ctx(uow)
    assert _qa(windows, again, uow) == {"entries": 3, "documents": 1, "duplicates": 1, "rejected": 1}
    assert again.ports.cognified == [(run_id, STAGES[1:])] and len(uow.runs.rows) == 1
    uow.runs.rows[0]["status"] = "completed"
    done = _qa_ctx(uow)
    assert _qa(windows, done, uow) == {"entries": 3, "documents": 0, "duplicates": 2, "rejected": 1}
    assert done.ports.cognified == []
