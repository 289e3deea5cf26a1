"""Sessions and improve against real workers: storing turns, stages, feedback, budget, no-op,
debounce, admission, the beat sweep of quiet sessions. (Claims, concurrency, lease takeover
and single-beat live in test_improve_claims.py.)
"""

from __future__ import annotations

import math
import uuid

import pytest
from improve_helpers import (
    ADMISSION_PATH,
    Beat,
    claims,
    dataset_id,
    fully_processed,
    max_seq,
    rows,
    runs,
    scalar,
    session_state,
    settled,
    stages,
    wait_until,
)

N, T = 10, 3.0
FLEET_ENV = {
    "ENGRAM_LOCK_LEASE_SECONDS": "30",
    "ENGRAM_IMPROVE_DEBOUNCE_ENTRIES": str(N),
    "ENGRAM_IMPROVE_DEBOUNCE_SECONDS": str(T),
    "ENGRAM_IMPROVE_ADMISSION": ADMISSION_PATH,
    "ENGRAM_IMPROVE_OPT_IN_STAGES": "triplet_enrichment",
    "ENGRAM_IMPROVE_SWEEP_SECONDS": "1",
    "ENGRAM_BEAT_LOCK_SECONDS": "3",
    # One pass per claim: every leftover request becomes the next claimant, so a burst of
    # requests produces many hand-overs (the pass bound itself is tested on the stall pair).
    "ENGRAM_IMPROVE_MAX_PASSES": "1",
}


@pytest.fixture(scope="module")
def fleet(spawn_worker):
    """Two real `engram worker` processes (concurrency 2 each) sharing one broker database."""
    a = spawn_worker(FLEET_ENV, concurrency=2, name="fleet-a")
    b = spawn_worker(FLEET_ENV, concurrency=2, name="fleet-b", broker_of=a)
    yield a
    b.stop()
    a.stop()


def _sweep(fleet, name: str) -> dict:
    return fleet.app.send_task(f"engram.improve.{name}").get(timeout=120)


def _wait_processed(store, dataset: str, session: str) -> None:
    wait_until(lambda: fully_processed(store, dataset, session), what=f"{dataset}/{session} processed")


def test_session_turn_is_stored_at_once_then_persisted_as_user_sessions_memory(fleet, store, dataset_name):
    stored = fleet.client.remember_turn(dataset=dataset_name, session_id="s1", question="Who runs Harbor Dynamics?",
                                        answer="Alice Moreau is the CEO of Harbor Dynamics.", context="org chart")
    assert stored.status == "session_stored" and stored.improve == "requested"  # the first run always fires
    entry = rows(store, "SELECT * FROM session_entries WHERE id = :i", i=stored.entry_id)[0]
    assert (entry["question"], entry["context"], entry["seq"]) == ("Who runs Harbor Dynamics?", "org chart", stored.seq)
    _wait_processed(store, dataset_name, "s1")

    items = rows(store, "SELECT * FROM data_items WHERE dataset_id = :d", d=dataset_id(store, dataset_name))
    assert len(items) == 1 and items[0]["node_sets"] == ["user_sessions"]
    assert "Alice Moreau is the CEO of Harbor Dynamics." in items[0]["content"]
    assert items[0]["source"] == f"session:s1#{stored.entry_id}"
    cognify = rows(store, "SELECT status FROM pipeline_runs WHERE data_item_id = :i", i=items[0]["id"])
    assert [r["status"] for r in cognify] == ["completed"]
    (run,) = runs(store, dataset_name, "s1")
    assert run["status"] == "completed" and run["trigger"] == "auto" and run["fence"] is not None
    got = {k: (v["status"], v["reason"]) for k, v in stages(store, run["id"]).items()}
    assert got == {
        "feedback_weights": ("skipped", "no_new_feedback"),
        "persist_session_qa": ("completed", None),
        "persist_agent_traces": ("skipped", "no_new_traces"),
        "extract_agent_context": ("skipped", "no_new_traces"),
        "distill_sessions": ("skipped", "llm_required"),  # the fleet runs on the offline default
        "update_user_preferences": ("skipped", "disabled_by_config"),
        "build_truth_subspace": ("skipped", "disabled_by_config"),
        "triplet_enrichment": ("completed", None),
        "global_context_index": ("skipped", "disabled_by_config"),
    }
    view = fleet.client.sessions(dataset_name)
    (s1,) = view["sessions"]
    assert (s1["entries"], s1["pending_entries"], s1["watermark_seq"]) == (1, 0, stored.seq)
    assert s1["session_claim"] is None and s1["runs"][0]["status"] == "completed"


def test_invalid_session_turn_fails_at_the_boundary_and_writes_nothing(fleet, store, dataset_name):
    before = scalar(store, "SELECT count(*) FROM session_entries")
    result = fleet.app.send_task("engram.remember", kwargs={"dataset": dataset_name, "session_id": "s",
                                                             "create_dataset": True, "content": "x"})
    with pytest.raises(Exception, match="a session turn takes question/answer/context"):
        result.get(timeout=60)
    assert scalar(store, "SELECT count(*) FROM session_entries") == before


def test_feedback_moves_source_weights_by_alpha_and_nothing_new_is_a_no_op(fleet, store, dataset_name):
    client = fleet.client
    client.remember("Alice Moreau is the CEO of Harbor Dynamics. Harbor Dynamics builds sonar buoys.",
                    dataset=dataset_name, background=False)
    ds = dataset_id(store, dataset_name)
    chunk = scalar(store, "SELECT id FROM chunks WHERE dataset_id = :d LIMIT 1", d=ds)
    edge = scalar(store, "SELECT id FROM edges WHERE dataset_id = :d AND relationship <> 'contains' LIMIT 1", d=ds)
    assert chunk and edge
    turn = client.remember_turn(dataset=dataset_name, session_id="fb", question="Who is the CEO?",
                                answer="Alice Moreau", source_chunk_ids=[chunk], source_edge_ids=[edge])
    _wait_processed(store, dataset_name, "fb")
    client.feedback(turn.entry_id, "helpful")
    out = client.feedback(turn.entry_id, "helpful", score=0.9)
    assert (out["helpful_count"], out["confidence"]) == (2, 0.9)

    started = client.improve(dataset_name, session_ids=["fb"])
    assert started.status == "started"
    wait_until(lambda: settled(store, dataset_name), what="feedback run")
    weight = 1 - 0.5 * 0.9**2  # two helpful steps of alpha 0.1 from 0.5
    assert scalar(store, "SELECT feedback_weight FROM chunks WHERE id = :i", i=chunk) == pytest.approx(weight)
    assert scalar(store, "SELECT feedback_weight FROM edges WHERE id = :i", i=edge) == pytest.approx(weight)
    got = stages(store, started.run_id)
    assert got["feedback_weights"]["status"] == "completed" and got["feedback_weights"]["counts"]["chunks"] == 1
    assert (got["persist_session_qa"]["status"], got["persist_session_qa"]["reason"]) == ("skipped", "no_new_entries")
    assert (got["triplet_enrichment"]["status"], got["triplet_enrichment"]["reason"]) == (
        "already_completed", "no edge changed since the last enrichment")

    # Nothing above the watermarks: the probe answers no_op and applies nothing twice.
    again = client.improve(dataset_name, session_ids=["fb"])
    assert again.status == "no_op"
    assert runs(store, dataset_name, "fb")[-1]["status"] == "no_op"
    assert scalar(store, "SELECT feedback_weight FROM chunks WHERE id = :i", i=chunk) == pytest.approx(weight)
    client.feedback(turn.entry_id, "harmful")
    assert client.improve(dataset_name, session_ids=["fb"]).status == "started"
    wait_until(lambda: settled(store, dataset_name), what="harmful run")
    assert scalar(store, "SELECT feedback_weight FROM chunks WHERE id = :i", i=chunk) == pytest.approx(weight * 0.9)


def test_dataset_improve_without_sessions_enriches_triplets_then_is_a_no_op(fleet, store, dataset_name):
    fleet.client.remember("Bob Lane founded Kestrel Foods in Port Alder.", dataset=dataset_name, background=False)
    ds = dataset_id(store, dataset_name)
    first = fleet.client.improve(dataset_name)
    assert first.status == "started" and first.session_ids == []
    wait_until(lambda: settled(store, dataset_name), what="dataset run")
    got = stages(store, first.run_id)
    assert (got["persist_session_qa"]["status"], got["persist_session_qa"]["reason"]) == ("skipped", "no_session_ids")
    edges = scalar(store, "SELECT count(*) FROM edges g JOIN entities s ON s.id = g.source_id"
                   " JOIN entities t ON t.id = g.target_id WHERE g.dataset_id = :d", d=ds)
    assert edges > 0 and got["triplet_enrichment"]["counts"] == {"triplets": edges}
    assert scalar(store, "SELECT count(*) FROM triplet_embeddings WHERE dataset_id = :d AND embedding IS NOT NULL",
                  d=ds) == edges
    assert fleet.client.improve(dataset_name).status == "no_op"


def test_budget_exhausted_mid_run_skips_the_remaining_stages(fleet, store):
    # A dataset whose automatic improves are declined: the turns wait for the explicit run.
    name = f"broke-{uuid.uuid4().hex[:8]}"
    for i in (1, 2):
        assert fleet.client.remember_turn(dataset=name, session_id="b", question=f"q{i}",
                                          answer=f"Fact number {i} about Brightwater Ferries.").improve == "declined"
    result = fleet.client.improve(name, session_ids=["b"], max_llm_calls=1)
    wait_until(lambda: settled(store, name), what="budget run")
    got = stages(store, result.run_id)
    # The offline extractor counts one call per chunk: two entries spend the budget of one call.
    assert got["persist_session_qa"]["status"] == "completed" and got["persist_session_qa"]["llm_calls"] == 2
    after = [s for s in got.values() if s["position"] > got["persist_session_qa"]["position"]]
    assert after and all((s["status"], s["reason"]) == ("skipped", "budget_exhausted") for s in after)
    (run,) = runs(store, name, "b")
    assert (run["status"], run["llm_calls"]) == ("budget_exhausted", 2)


def test_debounce_50_remembers_in_a_burst_start_at_most_the_expected_improves(fleet, store, dataset_name):
    pending = [fleet.app.send_task("engram.remember", kwargs={
        "dataset": dataset_name, "session_id": "burst", "create_dataset": True,
        "question": f"burst question {i}", "answer": f"burst answer {i}"}) for i in range(50)]
    outcomes = [p.get(timeout=180)["improve"] for p in pending]
    span = scalar(store, "SELECT extract(epoch FROM max(e.created_at) - min(e.created_at)) FROM session_entries e"
                  " JOIN datasets d ON d.id = e.dataset_id WHERE d.name = :n", n=dataset_name)
    requested = outcomes.count("requested")
    # Between two fires either N entries arrived or T passed; the first always fires. (The
    # decisions trail the inserts by a moment, hence ceil over the inserts' span.)
    assert 1 <= requested <= 1 + (50 - 1) // N + math.ceil(float(span) / T)
    assert outcomes.count("debounced") == 50 - requested
    assert session_state(store, dataset_name, "burst")["auto_requests"] == requested
    wait_until(lambda: settled(store, dataset_name), what="burst runs")
    auto_claims = [c for c in claims(store, dataset_name) if c["trigger"] == "auto"]
    assert 1 <= len(auto_claims) <= requested


def test_quiet_session_is_improved_by_the_beat_sweep_after_T(fleet, store, dataset_name, tmp_path):
    client = fleet.client
    client.remember_turn(dataset=dataset_name, session_id="quiet", question="first", answer="first answer")
    _wait_processed(store, dataset_name, "quiet")

    def pending_turn(i: int):
        # Debounced: under N new entries and (normally) under T since the last improve.
        turn = client.remember_turn(dataset=dataset_name, session_id="quiet", question=f"later {i}", answer="a")
        if turn.improve != "debounced":
            _wait_processed(store, dataset_name, "quiet")
            return pending_turn(i + 100)
        return turn

    turn = pending_turn(1)
    assert session_state(store, dataset_name, "quiet")["watermark_seq"] < turn.seq
    wait_until(lambda: scalar(store, "SELECT now() - created_at > make_interval(secs => :t) FROM session_entries"
                              " WHERE id = :i", t=T, i=turn.entry_id), what="entry older than T")
    swept = _sweep(fleet, "sweep_quiet_sessions")
    assert any("quiet" in s["session_ids"] for s in swept["started"])
    _wait_processed(store, dataset_name, "quiet")
    assert runs(store, dataset_name, "quiet")[-1]["trigger"] == "beat"

    # And a real beat does the same on its own schedule.
    turn = pending_turn(2)
    beat = Beat(dict(fleet.env), tmp_path / "beat.log")
    try:
        _wait_processed(store, dataset_name, "quiet")
        assert beat.sent("improve-quiet-sessions") >= 1, beat.log()
    finally:
        beat.stop()
    assert max_seq(store, dataset_name, "quiet") == turn.seq
    assert [r["trigger"] for r in runs(store, dataset_name, "quiet")][-1] == "beat"


def test_entries_stored_without_a_debounce_are_improved_by_the_quiet_sweep(fleet, store, dataset_name):
    # e.g. recall stores its question and answer in the session directly, without asking for an improve
    fleet.client.remember("Port Alder has a lantern festival.", dataset=dataset_name, background=False)
    ds = dataset_id(store, dataset_name)
    with store.unit_of_work() as uow:
        entry = uow.sessions.add_entry(dataset_id=ds, session_id="recalled", user_id=uow.access.ensure_user("default"),
                                       question="What festival?", answer="the lantern festival")
    assert session_state(store, dataset_name, "recalled") is None
    wait_until(lambda: scalar(store, "SELECT now() - created_at > make_interval(secs => :t) FROM session_entries"
                              " WHERE id = :i", t=T, i=entry), what="entry older than T")
    swept = _sweep(fleet, "sweep_quiet_sessions")
    assert {"dataset_id": str(ds), "session_ids": ["recalled"]} in swept["started"]
    _wait_processed(store, dataset_name, "recalled")
    assert fleet.client.sessions(dataset_name)["sessions"][0]["pending_entries"] == 0


def test_agent_traces_waiting_longer_than_T_are_improved_by_the_quiet_sweep(fleet, store, dataset_name):
    # A trace requests no improve itself: the sweep turns it into a session entry (and memory).
    fleet.client.remember("Port Alder has a lantern festival.", dataset=dataset_name, background=False)
    trace_id = uuid.uuid4()
    stored = fleet.client.call("engram.agent.trace", trace_id=str(trace_id), dataset=dataset_name,
                               session_id="traced", function="answer", inputs=repr({"args": ("I prefer lanterns.",)}),
                               result="noted", memory="- Port Alder has a lantern festival.")
    assert stored["status"] == "stored"
    wait_until(lambda: scalar(store, "SELECT now() - created_at > make_interval(secs => :t) FROM agent_traces"
                              " WHERE id = :i", t=T, i=trace_id), what="trace older than T")
    swept = _sweep(fleet, "sweep_quiet_sessions")
    assert {"dataset_id": str(dataset_id(store, dataset_name)), "session_ids": ["traced"]} in swept["started"]
    wait_until(lambda: (session_state(store, dataset_name, "traced") or {}).get("context_watermark_seq")
               == scalar(store, "SELECT seq FROM agent_traces WHERE id = :i", i=trace_id), what="trace taken")
    wait_until(lambda: settled(store, dataset_name), what="sweep's run settled")
    (entry,) = rows(store, "SELECT * FROM session_entries WHERE session_id = 'traced'")
    assert (entry["question"], entry["answer"], entry["context"]) == (
        "I prefer lanterns.", "noted", "- Port Alder has a lantern festival.")
    assert runs(store, dataset_name, "traced")[0]["trigger"] == "beat"
    assert rows(store, "SELECT statement FROM lessons WHERE session_id = 'traced'") == [
        {"statement": "default said: I prefer lanterns."}]


def test_the_quiet_sweep_asks_admission_per_session(fleet, store, dataset_name):
    fleet.client.remember("Port Alder has a lantern festival.", dataset=dataset_name, background=False)
    ds = dataset_id(store, dataset_name)
    with store.unit_of_work() as uow:
        user = uow.access.ensure_user("default")
        entries = [uow.sessions.add_entry(dataset_id=ds, session_id=sid, user_id=user, question="q", answer="a")
                   for sid in ("nope-1", "ok-1")]
    wait_until(lambda: scalar(store, "SELECT bool_and(now() - created_at > make_interval(secs => :t))"
                              " FROM session_entries WHERE id = ANY(:i)", t=T, i=entries), what="entries older than T")
    swept = _sweep(fleet, "sweep_quiet_sessions")
    assert {"dataset_id": str(ds), "session_ids": ["ok-1"]} in swept["started"]
    assert {"dataset_id": str(ds), "session_ids": ["nope-1"], "reason": "session_over_quota"} in swept["declined"]
    _wait_processed(store, dataset_name, "ok-1")
    assert session_state(store, dataset_name, "nope-1")["declined_reason"] == "session_over_quota"
    assert session_state(store, dataset_name, "ok-1")["declined_reason"] is None


def test_admission_declines_automatic_improves_but_never_explicit_ones(fleet, store):
    broke = f"broke-{uuid.uuid4().hex[:8]}"
    turn = fleet.client.remember_turn(dataset=broke, session_id="s", question="q", answer="a")
    assert (turn.status, turn.improve, turn.reason) == ("session_stored", "declined", "insufficient_credits")
    assert session_state(store, broke, "s")["declined_reason"] == "insufficient_credits"
    # Beat-started improves are automatic too: declined once the entry is quiet.
    wait_until(lambda: scalar(store, "SELECT now() - created_at > make_interval(secs => :t) FROM session_entries"
                              " WHERE id = :i", t=T, i=turn.entry_id), what="entry older than T")
    swept = _sweep(fleet, "sweep_quiet_sessions")
    assert {"reason": "insufficient_credits", "session_ids": ["s"]}.items() <= next(
        d for d in swept["declined"] if d["dataset_id"] == str(dataset_id(store, broke))).items()
    assert runs(store, broke) == [] and session_state(store, broke, "s")["watermark_seq"] == 0

    explicit = fleet.client.improve(broke, session_ids=["s"])
    assert explicit.status == "started"
    _wait_processed(store, broke, "s")


@pytest.mark.parametrize("prefix", ["boom", "weird"])
def test_admission_callback_that_raises_or_answers_garbage_allows(fleet, store, prefix):
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    turn = fleet.client.remember_turn(dataset=name, session_id="s", question="q", answer="a")
    assert (turn.improve, turn.reason) == ("requested", None)
    _wait_processed(store, name, "s")
    assert [r["trigger"] for r in runs(store, name, "s")] == ["auto"]


def test_100_concurrent_improves_on_two_workers_never_overlap_and_leave_nothing_pending(fleet, store, dataset_name):
    app = fleet.app
    app.send_task("engram.remember", kwargs={"dataset": dataset_name, "session_id": "hot", "create_dataset": True,
                                             "question": "seed", "answer": "seed"}).get(timeout=60)
    sent = []
    for i in range(100):  # every improve request comes with its own new entry, all in flight at once
        sent.append(app.send_task("engram.remember", kwargs={
            "dataset": dataset_name, "session_id": "hot", "question": f"hot q{i}", "answer": f"hot answer {i}"}))
        sent.append(app.send_task("engram.improve", kwargs={"dataset": dataset_name, "session_ids": ["hot"]}))
    results = [r.get(timeout=300) for r in sent]
    improves = [r for r in results if "rerun_requested" in r]
    assert len(improves) == 100 and {r["status"] for r in improves} <= {"started", "no_op", "busy"}
    assert all(r["rerun_requested"] for r in improves if r["status"] == "busy")
    assert any(r["status"] == "busy" for r in improves)  # they really contended

    def drained() -> bool:
        if settled(store, dataset_name):
            return fully_processed(store, dataset_name, "hot")
        if not rows(store, "SELECT 1 FROM improve_claims c JOIN datasets d ON d.id = c.dataset_id"
                    " WHERE d.name = :n AND c.status = 'held'", n=dataset_name):
            _sweep(fleet, "sweep_reruns")  # what beat does with a leftover request
        return False

    wait_until(drained, timeout=600, poll=1.0, what="all requests processed")
    held = claims(store, dataset_name)
    assert len(held) >= 2 and all(c["status"] == "released" for c in held)
    for before, after in zip(held, held[1:]):  # holders one at a time, fences increasing
        assert before["released_at"] <= after["claimed_at"], (before, after)
        assert before["fence"] < after["fence"]
    ds = dataset_id(store, dataset_name)
    entries = rows(store, "SELECT id FROM session_entries WHERE dataset_id = :d", d=ds)
    sources = {r["source"] for r in rows(store, "SELECT source FROM data_items WHERE dataset_id = :d"
                                         " AND 'user_sessions' = ANY(node_sets)", d=ds)}
    assert len(entries) == 101 and sources == {f"session:hot#{e['id']}" for e in entries}
    assert scalar(store, "SELECT count(*) FROM pipeline_runs WHERE dataset_id = :d AND pipeline = 'cognify'"
                  " AND status <> 'completed'", d=ds) == 0


def test_a_second_beat_does_not_double_schedule_and_takes_over_when_the_first_dies(fleet, tmp_path):
    import signal

    env = dict(fleet.env)
    first = Beat(env, tmp_path / "beat-1.log")
    second = None
    try:
        wait_until(lambda: first.sent("improve-rerun-requests") >= 1, what="first beat scheduling")
        second = Beat(env, tmp_path / "beat-2.log")
        wait_until(lambda: "beat: Starting" in second.log_path.read_text(errors="replace"), what="second beat up")
        start = first.sent("improve-rerun-requests")
        # A window of 5 periods of the first beat: a second scheduler would have sent as many.
        wait_until(lambda: first.sent("improve-rerun-requests") >= start + 5, what="5 more periods")
        assert second.proc.poll() is None and second.sent() == 0, second.log()
        first.stop(signal.SIGKILL)  # no clean release: the standby waits out the lease
        wait_until(lambda: second.sent("improve-rerun-requests") >= 3, what="standby taking over")
        assert "beat lock acquired" in second.log()
    finally:
        first.stop()
        if second is not None:
            second.stop()


def test_cli_feedback_improve_and_sessions(fleet, store, dataset_name):
    import json
    import subprocess
    import sys

    def engram(*args) -> subprocess.CompletedProcess:
        env = dict(fleet.env, COLUMNS="200")
        out = subprocess.run([sys.executable, "-m", "engram.cli", *args], env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        return out

    turn = fleet.client.remember_turn(dataset=dataset_name, session_id="cli", question="q", answer="a")
    _wait_processed(store, dataset_name, "cli")
    assert "helpful 1, harmful 0" in engram("feedback", str(turn.entry_id), "helpful", "--score", "0.8").stdout
    improved = json.loads(engram("improve", "--dataset", dataset_name, "--session", "cli", "--wait", "--json").stdout)
    assert improved["result"]["status"] == "started"
    assert improved["run"]["status"] == "completed"
    assert {s["stage"]: s["status"] for s in improved["run"]["stages"]}["feedback_weights"] == "completed"
    view = json.loads(engram("sessions", "--dataset", dataset_name, "--json").stdout)
    (cli,) = view["sessions"]
    assert (cli["entries"], cli["pending_entries"], cli["pending_feedback"]) == (1, 0, 0)
    table = engram("sessions", "--dataset", dataset_name).stdout
    assert "cli" in table and "completed" in table
