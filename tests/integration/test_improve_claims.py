"""Claims on a real Redis, fencing in Postgres, a stalled holder taken over, stage failures.

The stall pair is two workers on one broker with a 3 s lease and a replay cassette whose
extraction of a STALLMARK turn takes a few seconds (so a holder can be frozen mid-stage) and
whose extraction of a FATALMARK turn is invalid JSON (persist_session_qa fails for real).
"""

from __future__ import annotations

import json
import os
import signal
import uuid

import pytest
import redis
from improve_helpers import (
    claims,
    dataset_id,
    fully_processed,
    rows,
    runs,
    scalar,
    session_state,
    settled,
    stages,
    wait_until,
)

from engram.adapters.claims import Busy, Claim, Claims, dataset_key, keys_for
from engram.adapters.store.improve import FencedOut, fence_scopes

EXTRACTION = {"graph": {"nodes": [], "edges": []}, "summary": {"summary": "a session turn", "description": ""}}


# ------------------------------------------------------------------ the claims adapter


@pytest.fixture
def claims_redis(services):
    return Claims(redis.Redis.from_url(services.redis_url, decode_responses=True))


def test_claim_takes_every_key_or_none_and_only_the_holder_renews_or_releases(claims_redis):
    ds = uuid.uuid4()
    first = claims_redis.claim(keys_for(ds, ["a", "b"]), 30)
    assert isinstance(first, Claim) and claims_redis.held(first)
    # Overlapping on one session (and the dataset): nothing of the second request is taken.
    second = claims_redis.claim(keys_for(ds, ["b", "c"]), 30)
    assert isinstance(second, Busy)
    assert claims_redis.client.exists(keys_for(ds, ["c"])[0]) == 0
    impostor = Claim(keys=first.keys, value="not-the-token|0|{}", fence=first.fence, lease_ms=30000)
    assert not claims_redis.renew(impostor) and claims_redis.release(impostor) == 0
    assert claims_redis.held(first) and claims_redis.renew(first)
    assert claims_redis.release(first) == len(first.keys)
    third = claims_redis.claim(keys_for(ds, ["b", "c"]), 30)
    assert isinstance(third, Claim) and third.fence > first.fence
    claims_redis.release(third)


def test_fencing_number_never_goes_below_the_floor_from_postgres(claims_redis):
    ds = uuid.uuid4()
    got = claims_redis.claim([dataset_key(ds)], 30, floor=10**12)
    assert got.fence == 10**12 + 1  # a Redis that lost its counter still fences above every write
    claims_redis.release(got)


def test_a_write_with_a_stale_fence_is_refused_and_rolled_back(store):
    with store.unit_of_work() as uow:
        uow.access.create_dataset("fence-user", f"fence-{uuid.uuid4().hex[:6]}")
    scopes = fence_scopes(uuid.uuid4(), ["s"])
    with store.unit_of_work() as uow:
        uow.improve.check_fence(scopes, 7)
    with pytest.raises(FencedOut, match="fencing number 6 is stale"):
        with store.unit_of_work() as uow:
            uow.improve.check_fence(scopes, 6)
    with store.unit_of_work() as uow:
        assert uow.improve.fence_floor(scopes) == 7
        uow.improve.check_fence(scopes, 7)  # the holder itself keeps writing


# ------------------------------------------------------------------ a stalled holder, a fatal stage


@pytest.fixture(scope="module")
def stall_pair(spawn_worker, tmp_path_factory):
    logs = tmp_path_factory.mktemp("stall")
    cassette = logs / "cassette.json"
    cassette.write_text(json.dumps({"version": 1, "entries": [
        {"contains": "STALLMARK", "response_model": "ChunkExtraction", "response": EXTRACTION, "delay_seconds": 4},
        {"contains": "FATALMARK", "response_model": "ChunkExtraction", "response": "this is not json"},
        {"contains": "", "response_model": "*", "response": EXTRACTION},
    ]}))
    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_LOCK_LEASE_SECONDS": "3",
           "ENGRAM_TASK_MAX_RETRIES": "0"}
    a = spawn_worker(env, name="stall-a")
    b = spawn_worker(env, name="stall-b", broker_of=a, start=False)  # started when A stalls
    yield a, b
    for h in (b, a):
        if h.proc and h.proc.poll() is None:
            os.killpg(h.proc.pid, signal.SIGCONT)
        h.stop()


def test_fatal_stage_failure_aborts_the_run_but_the_entry_stays_stored(stall_pair, store, dataset_name):
    a, _ = stall_pair
    turn = a.client.remember_turn(dataset=dataset_name, session_id="f", question="FATALMARK?", answer="boom")
    assert (turn.status, turn.improve) == ("session_stored", "requested")
    wait_until(lambda: runs(store, dataset_name, "f") and settled(store, dataset_name), what="aborted run")
    (run,) = runs(store, dataset_name, "f")
    got = stages(store, run["id"])
    assert run["status"] == "aborted"
    assert got["persist_session_qa"]["status"] == "failed" and "LLMInvalidOutput" in got["persist_session_qa"]["error"]
    assert got["feedback_weights"]["status"] == "skipped"  # before the fatal stage: its own gate
    after = [s for s in got.values() if s["position"] > got["persist_session_qa"]["position"]]
    assert after and all(s["reason"] == "aborted: fatal stage persist_session_qa failed" for s in after)
    assert [c["status"] for c in claims(store, dataset_name)] == ["released"]
    # Storage never depends on improvement: the entry is there, still pending for a later run.
    assert scalar(store, "SELECT count(*) FROM session_entries WHERE id = :i", i=turn.entry_id) == 1
    assert session_state(store, dataset_name, "f")["watermark_seq"] == 0


def test_a_holder_whose_lease_expired_is_taken_over_and_its_late_write_is_refused(stall_pair, store, dataset_name):
    a, b = stall_pair
    turn = a.client.remember_turn(dataset=dataset_name, session_id="l", question="STALLMARK?", answer="slow")
    ds = dataset_id(store, dataset_name)
    # Holder A is inside persist_session_qa, waiting on the (slow) extraction of the turn.
    wait_until(lambda: rows(store, "SELECT 1 FROM stage_runs s JOIN pipeline_runs p ON p.id = s.run_id"
                            " WHERE p.dataset_id = :d AND s.stage = 'extract_graph_and_summarize'"
                            " AND s.status = 'running'", d=ds), what="holder A mid-stage")
    os.killpg(a.proc.pid, signal.SIGSTOP)  # a stalled worker: no progress, no lease renewal
    try:
        r = redis.Redis.from_url(a.redis_url)
        wait_until(lambda: r.exists(dataset_key(ds)) == 0, what="A's lease to expire")
        (stale,) = claims(store, dataset_name)
        b.start("stall-b")
        # Beat's claim sweep finds the dead lease, asks for a rerun, and B takes the session over.
        swept = b.app.send_task("engram.improve.sweep_claims").get(timeout=60)
        assert str(stale["id"]) in swept["abandoned"]
        wait_until(lambda: [c["status"] for c in claims(store, dataset_name)] == ["abandoned", "released"],
                   what="B to take over, finish and release")
        assert session_state(store, dataset_name, "l")["watermark_seq"] == turn.seq  # written by B
    finally:
        os.killpg(a.proc.pid, signal.SIGCONT)
    # A wakes up, finishes its extraction and tries to advance the watermark: refused.
    stale_run, taker_run = runs(store, dataset_name, "l")
    wait_until(lambda: stages(store, stale_run["id"])["persist_session_qa"]["status"] != "running",
               what="A's late write")
    persist = stages(store, stale_run["id"])["persist_session_qa"]
    assert persist["status"] == "fenced_out" and f"fencing number {stale['fence']} is stale" in persist["error"]
    taker = claims(store, dataset_name)[1]
    assert taker["trigger"] == "rerun" and taker["fence"] > stale["fence"]
    assert taker_run["status"] == "completed" and taker_run["fence"] == taker["fence"]
    assert runs(store, dataset_name, "l")[0]["status"] == "lost"
    assert scalar(store, "SELECT fence FROM improve_fences WHERE scope = :s", s=f"dataset:{ds}") == taker["fence"]
    assert claims(store, dataset_name)[0]["released_at"] is None
    assert fully_processed(store, dataset_name, "l")


def test_the_holder_rechecks_for_new_work_up_to_3_passes_then_leaves_the_rest_to_the_next(stall_pair, store,
                                                                                           dataset_name):
    client = stall_pair[0].client
    client.remember_turn(dataset=dataset_name, session_id="p", question="STALLMARK 0", answer="a")
    for k in (1, 2, 3):
        # While pass k is in its slow persist stage, a new turn and an explicit request arrive.
        wait_until(lambda k=k: rows(store, "SELECT 1 FROM pipeline_runs r JOIN stage_runs s ON s.run_id = r.id"
                                    " JOIN datasets d ON d.id = r.dataset_id WHERE d.name = :n AND r.pass = :k"
                                    " AND r.pipeline = 'improve'"
                                    " AND s.stage = 'persist_session_qa' AND s.status = 'running'",
                                    n=dataset_name, k=k), what=f"pass {k} persisting")
        assert client.remember_turn(dataset=dataset_name, session_id="p", question=f"STALLMARK {k}",
                                    answer="a").improve == "debounced"
        busy = client.improve(dataset_name, session_ids=["p"])
        assert (busy.status, busy.rerun_requested) == ("busy", True)
    wait_until(lambda: fully_processed(store, dataset_name, "p"), what="every turn processed")
    first, second = claims(store, dataset_name)
    assert (first["trigger"], first["passes"], first["status"]) == ("auto", 3, "released")
    assert (second["trigger"], second["status"]) == ("rerun", "released")  # the request left after pass 3
    assert [(r["pass"], r["status"]) for r in runs(store, dataset_name, "p")] == [
        (1, "completed"), (2, "completed"), (3, "completed"), (1, "completed")]


# ------------------------------------------------------------------ a non-fatal stage failure


def test_a_non_fatal_stage_failure_is_recorded_and_the_run_goes_on(worker, worker_factory, store, dataset_name):
    # Memory made by the healthy shared worker; then a worker whose embedding provider is down.
    worker.client.remember("Carla Diaz chairs the Saltmarsh Institute.", dataset=dataset_name, background=False)
    turn = worker.client.remember_turn(dataset=dataset_name, session_id="n", question="Who chairs it?",
                                       answer="Carla Diaz", source_chunk_ids=[scalar(
                                           store, "SELECT id FROM chunks WHERE dataset_id = :d LIMIT 1",
                                           d=dataset_id(store, dataset_name))])
    wait_until(lambda: fully_processed(store, dataset_name, "n"), what="first run")
    worker.client.feedback(turn.entry_id, "helpful")
    broken = worker_factory({"ENGRAM_EMBEDDING_MODEL": "openai/text-embedding-3-small",
                             "ENGRAM_IMPROVE_OPT_IN_STAGES": "triplet_enrichment,global_context_index",
                             "ENGRAM_TASK_MAX_RETRIES": "0"})
    result = broken.client.improve(dataset_name, session_ids=["n"])
    wait_until(lambda: settled(store, dataset_name), what="run with a failing stage")
    got = stages(store, result.run_id)
    assert got["triplet_enrichment"]["status"] == "failed" and got["triplet_enrichment"]["error"]
    assert got["feedback_weights"]["status"] == "completed"
    # Still run after the failure, not aborted (it fails too: its overview needs the embedder).
    assert got["global_context_index"]["status"] == "failed" and got["global_context_index"]["reason"] is None
    (run,) = [r for r in runs(store, dataset_name, "n") if r["id"] == result.run_id]
    assert run["status"] == "completed_with_errors" and "triplet_enrichment" in run["error"]
    assert claims(store, dataset_name)[-1]["status"] == "released"
