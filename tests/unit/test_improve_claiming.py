"""Improve claiming (pipelines/improve/claiming.py) over the in-memory unit of work and an
in-memory lock: no Postgres, Redis or worker. What a claimant sees when the claim is held by
another, when it takes it, how a pass ends, and how a crashed holder's claim expires."""

from __future__ import annotations

import uuid

import pytest

from engram.pipelines.improve.claiming import Claiming, FencedOut, Policy, UnknownRun, claim_of, fence_scopes
from engram.pipelines.improve.flow import IMPROVE
from fake_store import FakeClaims, FakeUnitOfWork

DATASET = uuid.uuid4()
POLICY = Policy(lease_seconds=30, max_passes=3, max_llm_calls=50, max_tokens=0)


class Work:
    """The pending-work probe: `pending` answers for a fresh pass (retries=True) and for the
    holder's re-check (retries=False)."""

    def __init__(self, pending: bool = True):
        self.pending, self.calls = pending, []

    def __call__(self, uow, dataset, sessions, retries):
        self.calls.append((dataset, sessions, retries))
        return {"sessions": {s: {"upto": 3} for s in sessions}, "pending": self.pending}


def _claiming(pending: bool = True):
    uow, claims = FakeUnitOfWork(), FakeClaims()
    return Claiming(uow, claims, POLICY, Work(pending)), uow, claims


def _end_stages(uow, run_id, status="completed"):
    for s in uow.runs.stages(run_id):
        uow.runs.finish_stage(run_id, s["stage"], status)


def test_taking_the_claim_opens_the_first_pass_with_every_stage_pending():
    use, uow, claims = _claiming()

    step = use.start(DATASET, ["s2", "s1", "s1"], "explicit", max_tokens=900)

    assert step.answer["status"] == "started" and step.answer["session_ids"] == ["s1", "s2"]
    assert step.run.status == "running" and step.run.stages == IMPROVE.names and step.kick is None
    run = uow.runs.flow_run(step.run.run_id, IMPROVE.name)
    assert (run["status"], run["claim_id"], run["pass"], run["fence"]) == ("running", step.claim_id, 1, 1)
    assert run["budget"] == {"max_llm_calls": 50, "max_tokens": 900} and run["snapshot"]["pending"]
    assert {s["stage"] for s in uow.runs.stages(run["id"]) if s["fatal"]} == {s.name for s in IMPROVE.stages if s.fatal}
    assert uow.improve.claims[step.claim_id]["status"] == "held" and claims.held(step.claim)
    assert str(step.answer["run_id"]) == str(run["id"]) and step.answer["fence"] == 1
    assert uow.improve.improving == [(DATASET, ["s1", "s2"])]  # the debounce counts from here


def test_a_claim_held_by_another_leaves_a_rerun_request_and_opens_nothing():
    use, uow, claims = _claiming()
    holder = use.start(DATASET, ["s1"], "auto")

    second = use.start(DATASET, ["s1", "s2"], "auto")  # s1 is held: none of its keys is taken

    assert second.answer["status"] == "busy" and second.answer["rerun_requested"] is True
    assert second.answer["reason"].startswith("held by {'token': 't1', 'fence': 1")
    assert second.run is None and second.kick is None and second.answer["run_id"] is None
    assert uow.improve.reruns == {(DATASET, "s1"), (DATASET, "s2")}
    assert len(uow.runs.rows) == 1 and len(uow.improve.claims) == 1
    assert not any(k.startswith(f"session:{DATASET}:s2") for k in claims.values) and claims.held(holder.claim)


def test_no_pending_work_is_a_no_op_run_and_the_claim_is_released_handing_requests_on():
    use, uow, claims = _claiming(pending=False)

    step = use.start(DATASET, ["s1"], "beat")

    assert step.answer["status"] == "no_op" and step.run is None and step.kick == DATASET
    run = uow.runs.flow_run(uuid.UUID(step.answer["run_id"]), IMPROVE.name)
    assert run["status"] == "no_op" and run["finished"] and uow.runs.stages(run["id"]) == []
    assert uow.improve.claims[uuid.UUID(step.answer["claim_id"])]["status"] == "released" and claims.values == {}


def test_finishing_the_last_pass_ends_the_run_and_releases_the_claim():
    use, uow, claims = _claiming()
    step = use.start(DATASET, ["s1"], "auto")
    _end_stages(uow, step.run.run_id)
    use.probe.pending = False  # nothing new arrived meanwhile

    done = use.finish(step.run.run_id)

    assert done.answer == {"run_id": str(step.run.run_id), "status": "completed", "pass": 1, "claim": "released"}
    assert uow.runs.flow_run(step.run.run_id, IMPROVE.name)["status"] == "completed"
    assert uow.improve.claims[step.claim_id]["status"] == "released" and claims.values == {}
    assert done.kick == DATASET and done.run is None
    # A redelivered finish changes nothing.
    assert use.finish(step.run.run_id).answer == {"run_id": str(step.run.run_id), "status": "completed",
                                                  "redelivered": True}


def test_new_work_during_a_pass_begins_another_under_the_same_claim_up_to_max_passes():
    use, uow, claims = _claiming()
    step = use.start(DATASET, ["s1"], "auto")
    runs = [step.run.run_id]
    for expected_pass in (2, 3):
        _end_stages(uow, runs[-1])
        following = use.finish(runs[-1])
        assert following.run is not None and following.claim_id == step.claim_id and following.kick is None
        assert uow.runs.flow_run(following.run.run_id, IMPROVE.name)["pass"] == expected_pass
        runs.append(following.run.run_id)
    _end_stages(uow, runs[-1])
    last = use.finish(runs[-1])  # work still pending, but the claim made its max passes
    assert last.answer["claim"] == "released" and last.run is None and claims.values == {}


def test_a_fatal_failure_aborts_the_run_and_no_further_pass_begins():
    use, uow, _ = _claiming()
    step = use.start(DATASET, ["s1"], "auto")
    fatal = next(s["stage"] for s in uow.runs.stages(step.run.run_id) if s["fatal"])
    uow.runs.finish_stage(step.run.run_id, fatal, "failed", error="boom")

    done = use.finish(step.run.run_id)

    assert done.answer["status"] == "aborted" and done.answer["claim"] == "released" and done.run is None
    assert uow.runs.flow_run(step.run.run_id, IMPROVE.name)["error"] == f"{fatal}: boom"


def test_a_lease_lost_between_stages_loses_the_claim_and_asks_for_a_rerun():
    use, uow, claims = _claiming()
    step = use.start(DATASET, ["s1"], "auto")
    _end_stages(uow, step.run.run_id)
    claims.expire(step.claim)

    done = use.finish(step.run.run_id)

    assert done.answer["claim"] == "lost" and done.run is None and done.kick is None
    assert uow.improve.claims[step.claim_id]["status"] == "lost" and (DATASET, "s1") in uow.improve.reruns


def test_a_crashed_holders_claim_expires_its_run_is_lost_and_the_next_claimant_fences_it_out():
    use, uow, claims = _claiming()
    crashed = use.start(DATASET, ["s1"], "auto")
    live = use.start(uuid.uuid4(), ["s9"], "auto")
    uow.improve.stale |= {crashed.claim_id, live.claim_id}  # neither renewed its row for a lease...
    claims.expire(crashed.claim)  # ...but only the crashed one's keys ran out

    assert use.expire_claims() == [crashed.claim_id]

    assert uow.improve.claims[crashed.claim_id]["status"] == "abandoned"
    assert uow.improve.claims[live.claim_id]["status"] == "held"  # slow but alive: never swept
    run = uow.runs.flow_run(crashed.run.run_id, IMPROVE.name)
    assert (run["status"], run["error"]) == ("lost", "claim abandoned (lease expired)")
    assert use.reruns(DATASET) == {DATASET: ["s1"]}
    successor = use.start(DATASET, ["s1"], "rerun")
    assert successor.answer["status"] == "started" and successor.claim.fence > crashed.claim.fence
    with pytest.raises(FencedOut, match="stale"):  # the crashed holder's late write is refused
        uow.improve.check_fence(fence_scopes(DATASET, ["s1"]), crashed.claim.fence)


def test_a_claim_lost_before_it_was_recorded_asks_for_a_rerun():
    use, uow, claims = _claiming()
    # A holder wrote fence 10 after this claimant read the floor, and the lock (restarted) counts from 5.
    uow.improve.fence_floor = lambda scopes: 0
    uow.improve.fences[f"dataset:{DATASET}"], claims.fence = 10, 5

    step = use.start(DATASET, ["s1"], "auto")

    assert step.answer["status"] == "busy" and step.answer["reason"] == "claim lost before it started"
    assert (DATASET, "s1") in uow.improve.reruns and uow.improve.claims == {}


def test_a_pass_whose_chain_cannot_be_enqueued_fails_its_run_and_releases_the_claim():
    use, uow, claims = _claiming()
    step = use.start(DATASET, ["s1"], "auto")

    use.abandon(step, ConnectionError("broker down"))

    run = uow.runs.flow_run(step.run.run_id, IMPROVE.name)
    assert (run["status"], run["error"]) == ("failed", "could not enqueue: broker down")
    assert uow.improve.claims[step.claim_id]["status"] == "released" and claims.values == {}


def test_rerun_requests_become_one_improve_per_dataset():
    use, uow, _ = _claiming()
    other = uuid.uuid4()
    uow.improve.request_rerun(DATASET, ["s2", "s1"])
    uow.improve.request_rerun(other, [])
    assert use.reruns() == {DATASET: ["s1", "s2"], other: []}
    assert use.reruns(other) == {other: []}


def test_finishing_an_unknown_run_says_so():
    use, _, _ = _claiming()
    with pytest.raises(UnknownRun, match="does not exist"):
        use.finish(uuid.uuid4())


def test_a_claim_row_gives_back_the_locks_claim():
    row = {"claim_keys": ["a", "b"], "claim_value": "tok|7|{}", "fence": 7}
    claim = claim_of(row, 1.5)
    assert (claim.keys, claim.fence, claim.lease_ms, claim.token) == (("a", "b"), 7, 1500, "tok")
