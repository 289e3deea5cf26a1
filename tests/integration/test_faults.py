"""Fault suite (`-m faults`): a SIGKILL storm, a Redis restart and a Postgres restart mid-ingest,
an LLM that times out, rate-limits and answers garbage. Every accepted document ends completed
(or failed with its error); nothing is lost, nothing duplicated (the graph equals the pure
pipeline's), no run is left open. Each scenario prints its figures (FAULT FIGURES ...)."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import pytest

from engram.tests.integration.faults import corpus, figures, wait_terminal

pytestmark = pytest.mark.faults

# Lost deliveries come back after the visibility timeout (2 x longest task): keep it short here.
# A shared 2-core machine is slow: generous task limits; a short heartbeat so the sweep (beat's
# job, ticked by the test) resumes runs whose worker was killed mid-stage.
FAULT_ENV = {"ENGRAM_LONGEST_TASK_SECONDS": "150", "ENGRAM_RUN_HEARTBEAT_TIMEOUT_SECONDS": "10", "ENGRAM_RETRY_BACKOFF_BASE_SECONDS": "0.5",
             "ENGRAM_RETRY_BACKOFF_MAX_SECONDS": "4", "ENGRAM_TASK_MAX_RETRIES": "8", "ENGRAM_ACCEPT_MAX_RETRIES": "15"}


def _dataset(store, name: str, user: str = "default") -> uuid.UUID:
    with store.unit_of_work() as uow:
        return uow.access.find_own(name, user)


def _retrying(store, dataset) -> bool:
    from sqlalchemy import text

    with store.unit_of_work() as uow:
        return bool(uow.conn.execute(text(
            "SELECT 1 FROM stage_runs s JOIN pipeline_runs r ON r.id = s.run_id WHERE r.dataset_id = :d"
            " AND s.error ILIKE 'retrying:%rate%limit%'"), {"d": dataset}).first())


def _sweep(fleet) -> None:
    try:
        fleet.client.call("engram.maintenance.sweep_runs")
    except Exception:  # the worker may be down this very moment; the next tick sweeps
        pass


def _remember_all(client, name: str, docs: list[str]) -> None:
    client.remember(dataset=name, items=[{"text": d} for d in docs])  # one message: a group of chains


def _sigkill_a_child(fleet, rng) -> bool:
    """SIGKILL one pool process: the worker's own supervisor forks a replacement at once."""
    import os
    import signal

    import psutil

    children = psutil.Process(fleet.proc.pid).children()
    if not children:
        return False
    os.kill(rng.choice(children).pid, signal.SIGKILL)
    return True


def test_sigkill_storm_during_ingest_loses_and_duplicates_nothing(spawn_worker, store):
    docs = corpus(200, uuid.uuid4().hex[:6])
    name = f"storm-{uuid.uuid4().hex[:8]}"
    fleet = spawn_worker(FAULT_ENV, concurrency=2, name="storm")
    figures_of = {"kills": 0, "child_kills": 0, "worker_kills": 0, "restarts": 0}
    stop = threading.Event()

    def storm():
        # 20 SIGKILLs: pool processes (the prefork supervisor replaces them) and, every fifth,
        # the whole worker (our supervisor starts it again; its unacked messages come back).
        rng = random.Random(14)
        while figures_of["kills"] < 20 and not stop.is_set():
            time.sleep(rng.uniform(1.0, 2.5))
            if figures_of["kills"] % 5 == 4:
                fleet.kill()
                figures_of["worker_kills"] += 1
                fleet.start("storm")
                figures_of["restarts"] += 1
            elif _sigkill_a_child(fleet, rng):
                figures_of["child_kills"] += 1
                figures_of["restarts"] += 1  # by the pool's supervisor
            else:
                continue
            figures_of["kills"] += 1

    try:
        _remember_all(fleet.client, name, docs)
        thread = threading.Thread(target=storm, daemon=True)
        thread.start()
        thread.join(timeout=900)
        stop.set()
        dataset = _dataset(store, name)
        runs = wait_terminal(store, dataset, len(docs), timeout=1200, tick=lambda: _sweep(fleet))
        out = figures("sigkill storm", store, dataset, docs, runs, **figures_of)
    finally:
        stop.set()
        fleet.stop()
    assert figures_of["kills"] == 20
    assert (out["lost"], out["duplicated"], out["stuck"]) == (0, 0, 0), out
    assert out["completed"] == len(docs), [r["error"] for r in runs if r["status"] == "failed"][:5]
    assert sum(out["missing_rows"].values()) == 0, out


# ------------------------------------------------------------------ restarts of Redis and Postgres

# A visibility timeout (2 x the longest task) far beyond the waits below, and no sweep ticked:
# the runs must ride out each restart on their own (publishes wait for the broker, dropped
# messages go back at once, stages retry the outage), never on a redelivery or the sweep.
RESTART_ENV = dict(FAULT_ENV, ENGRAM_LONGEST_TASK_SECONDS="900")
RESTART_DOCS = 40
RESTART_WAIT = 300  # seconds; well below the 1,800 s visibility timeout


@pytest.fixture(scope="module")
def restart_fleet(spawn_worker, services):
    if not (services.embedded_redis and services.embedded_postgres):
        pytest.skip("restarts the embedded servers; external ones are not ours to restart")
    fleet = spawn_worker(RESTART_ENV, concurrency=2, name="restarts")
    yield fleet
    fleet.stop()


def _embedded():
    from engram.settings import Settings

    return Settings(database_url=None, redis_url=None)


def _wait_completed(store, dataset, n: int, timeout: float = 180) -> None:
    """Until n runs of the dataset completed: the restart then hits an ingest in full flight."""
    from engram.tests.integration.faults import run_states

    deadline = time.monotonic() + timeout
    while sum(r["status"] == "completed" for r in run_states(store, dataset)) < n:
        assert time.monotonic() < deadline, "ingest made no progress before the restart"
        time.sleep(0.5)


def _log_figures(fleet, since: int) -> dict:
    """What the worker's log says it did to ride out the restart (after byte `since`)."""
    import re

    log = fleet.log_path.read_text(errors="replace")[since:]
    return {"messages_restored": sum(int(n) for n in re.findall(r"restored (\d+) messages dropped", log)),
            "publish_retries": log.count("Retrying refused callback publish"),
            "task_retries": len(re.findall(r"transient \w+, retry", log))}


def _restart_mid_ingest(fleet, store, scenario: str, stop, start) -> dict:
    """Half the corpus in flight when the service stops; the other half sent while it is down
    (accepted once it is back); returns the figures."""
    docs = corpus(RESTART_DOCS, uuid.uuid4().hex[:6])
    name = f"{scenario.split()[0]}-{uuid.uuid4().hex[:8]}"
    log_start = fleet.log_path.stat().st_size
    first, second = docs[: len(docs) // 2], docs[len(docs) // 2:]
    _remember_all(fleet.client, name, first)
    dataset = _dataset(store, name)
    _wait_completed(store, dataset, 3)
    sent: dict = {}

    def send():
        try:
            _remember_all(fleet.client, name, second)
            sent["ok"] = True
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            sent["error"] = repr(exc)

    stop()
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    time.sleep(3)
    start()
    sender.join(timeout=180)
    runs = wait_terminal(store, dataset, len(docs), timeout=RESTART_WAIT)
    out = figures(scenario, store, dataset, docs, runs, kills=0, restarts=1, sent_during_outage=len(second),
                  **_log_figures(fleet, log_start))
    assert sent.get("ok"), sent
    return dict(out, runs=runs)


def test_redis_restart_mid_ingest_loses_and_duplicates_nothing(restart_fleet, store, services):
    from engram.adapters import services as svc

    embedded = _embedded()

    def start():
        assert svc.resolve(embedded).redis_url == services.redis_url  # same port: the fleet reconnects

    out = _restart_mid_ingest(restart_fleet, store, "redis restart", lambda: svc.stop_embedded_redis(embedded), start)
    assert (out["lost"], out["duplicated"], out["stuck"]) == (0, 0, 0), out
    assert out["completed"] == RESTART_DOCS, [r["error"] for r in out["runs"] if r["status"] == "failed"][:5]
    assert sum(out["missing_rows"].values()) == 0, out


def test_postgres_restart_mid_ingest_loses_and_duplicates_nothing(restart_fleet, store, services):
    from engram.adapters import services as svc

    embedded = _embedded()

    def start():
        assert svc.resolve(embedded).database_url == services.database_url  # same socket: the fleet reconnects

    out = _restart_mid_ingest(restart_fleet, store, "postgres restart", lambda: svc.stop_embedded_postgres(embedded),
                              start)
    assert (out["lost"], out["duplicated"], out["stuck"]) == (0, 0, 0), out
    assert out["completed"] == RESTART_DOCS, [r["error"] for r in out["runs"] if r["status"] == "failed"][:5]
    assert sum(out["missing_rows"].values()) == 0, out


# ------------------------------------------------------------------ a failing LLM


def test_llm_timeouts_rate_limits_and_garbage_end_each_run_with_its_error(spawn_worker, store, tmp_path):
    """Faked only through the gateway: a replay cassette that times out (for good), rate-limits
    (then the provider recovers) or answers garbage for some documents, mid-ingest."""
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.tests.integration.faults import _item_id

    tag = uuid.uuid4().hex[:6]
    docs = corpus(16, tag)
    timeouts, limited, garbage = docs[1:3], docs[5:7], docs[9:11]

    def marker(doc: str) -> str:  # unique per document: "Person3 Halvorsen works at ..."
        return doc.split(".")[1].strip()

    failing = ([{"contains": marker(d), "response_model": "*", "error": "timeout"} for d in timeouts]
               + [{"contains": marker(d), "response_model": "*", "response": "{not json"} for d in garbage])
    limiting = [{"contains": marker(d), "response_model": "*", "error": "rate_limit"} for d in limited]
    answers = [{"contains": marker(d), "response_model": "ChunkExtraction",
                "response": offline_chunk_extraction(d).model_dump(mode="json")} for d in docs]
    cassette = tmp_path / "faults.json"
    cassette.write_text(json.dumps({"version": 1, "entries": failing + limiting + answers}))
    model = f"replay:{cassette}"
    fleet = spawn_worker(dict(FAULT_ENV, ENGRAM_LLM_MODEL=model, ENGRAM_TASK_MAX_RETRIES="4"), concurrency=2,
                         name="llm-faults")
    name = f"llm-{tag}"
    try:
        _remember_all(fleet.client, name, docs)
        dataset = _dataset(store, name)
        deadline = time.monotonic() + 120
        while not _retrying(store, dataset) and time.monotonic() < deadline:
            time.sleep(0.2)
        # The provider recovers from its rate limit: those runs complete on a retry.
        cassette.write_text(json.dumps({"version": 1, "entries": failing + answers}))
        runs = wait_terminal(store, dataset, len(docs), timeout=240)
        out = figures("llm timeout/429/garbage", store, dataset, docs, runs, llm_model=model, kills=0, restarts=0,
                      llm_timeouts=len(timeouts), llm_rate_limited=len(limited), llm_garbage=len(garbage))
    finally:
        fleet.stop()
    by_item = {r["data_item_id"]: r for r in runs}
    errors = {kind: [by_item[_item_id(dataset, d)] for d in group]
              for kind, group in (("timeout", timeouts), ("rate_limit", limited), ("garbage", garbage))}
    assert (out["lost"], out["duplicated"], out["stuck"], out["failed_without_error"]) == (0, 0, 0, 0), out
    assert all(r["status"] == "failed" and "timeout" in r["error"].lower() for r in errors["timeout"]), errors
    assert all(r["status"] == "completed" for r in errors["rate_limit"]), errors
    assert all(r["status"] == "failed" and "invalid output" in r["error"] for r in errors["garbage"]), errors
    assert out["completed"] == len(docs) - len(timeouts) - len(garbage), out
    assert sum(out["missing_rows"].values()) == 0, out


def test_a_message_a_worker_dropped_with_its_connection_goes_back_to_its_queue_at_once(services):
    """What the worker's consumer does after reconnecting (adapters/broker): a message delivered
    but never started is back on its queue at once, not after the visibility timeout."""
    import redis
    from celery import Celery
    from kombu import Queue

    from engram.adapters.broker import restore_dropped

    queue = f"dropped-{uuid.uuid4().hex[:8]}"  # a queue no worker consumes
    client = redis.Redis.from_url(services.redis_url)
    app = Celery("drop", broker=services.redis_url)
    try:
        with app.connection_for_write() as conn:
            conn.Producer().publish({"n": 1}, exchange="", routing_key=queue, declare=[Queue(queue)])
            channel = conn.channel()
            message = channel.basic_get(queue, no_ack=False)  # delivered: in the unacked hash only
            assert client.llen(queue) == 0 and client.hexists("unacked", message.delivery_tag)
            assert restore_dropped(app, [message.delivery_tag, "no-such-tag"]) == []
            assert client.llen(queue) == 1 and not client.hexists("unacked", message.delivery_tag)
            assert channel.basic_get(queue, no_ack=True).payload == {"n": 1}
    finally:
        client.delete(queue)
