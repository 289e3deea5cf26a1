"""Two hosts: two `engram worker` groups in separate processes, each with its own state directory
and node name, sharing only the Postgres and Redis URLs and the signing key; a producer in a
third process with a state directory of its own. Nothing the fleet relies on is kept on one
machine: runs, embedding batches, improve claims, beat and message signing all hold across them
(docs/operations.md#past-one-machine).

What tells the hosts apart is the result backend: with `result_extended` every task's result
names the node (`hosta@...`, `hostb@...`) that ran it. Each host also serves a queue of its own
(`<host>-only`), so a message can be put in front of one host on purpose.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis
from celery import Celery
from improve_helpers import Beat, claims, dataset_id, fully_processed, rows, scalar, wait_until

from engram.adapters.claims import describe
from engram.adapters.signing import sign

HOSTS = ("hosta", "hostb")
N_DOCS = 12
TAG = uuid.uuid4().hex[:8]
COGNIFY_STAGES = {f"engram.cognify.{s}" for s in ("classify", "chunk", "extract_graph_and_summarize", "embed_and_load")}
EXTRACTION = {"graph": {"nodes": [], "edges": []}, "summary": {"summary": "a session turn", "description": ""}}
# Every document's extraction names the same two entities (tagged: new to the shared database), so
# both hosts meet the same texts and each must be embedded once for the fleet.
DOC_EXTRACTION = {
    "graph": {"nodes": [{"id": "h", "name": f"Harbor Dynamics {TAG}", "type": f"Company{TAG}"},
                        {"id": "a", "name": f"Alice Moreau {TAG}", "type": f"Person{TAG}"}],
              "edges": [{"source_node_id": "a", "target_node_id": "h", "relationship_name": "runs"}]},
    "summary": {"summary": f"A site visit at Harbor Dynamics {TAG}.", "description": ""},
}
PRODUCER = """
import json, sys
from engram.tasks.client import EngramClient

items = json.load(sys.stdin)
handle = EngramClient(timeout=120).remember(dataset=sys.argv[1], items=items, create_dataset=True)
print(json.dumps([str(r.run_id) for r in handle.runs]))
"""


class Fleet:
    def __init__(self, hosts: dict, key: str, root: Path):
        self.hosts, self.key, self.root = hosts, key, root
        self.redis_url = hosts["hosta"].redis_url
        self.redis = redis.Redis.from_url(self.redis_url, decode_responses=True)
        self.bare = Celery(broker=self.redis_url, backend=self.redis_url)  # a broker client, not Engram's app

    def send(self, name: str, kwargs: dict, host: str, key: str | None = None):
        """A message for one host's own queue, signed with `key` (default: the fleet's)."""
        signature = sign((key or self.key).encode(), name, kwargs)
        return self.bare.send_task(name, kwargs=kwargs, queue=f"{host}-only", headers={"engram_sig": signature})

    def results(self) -> list[dict]:
        """Every task result in the backend: name, kwargs, status, result and the node that ran it."""
        out = []
        for key in self.redis.scan_iter("celery-task-meta-*", count=1000):
            raw = self.redis.get(key)
            if raw:
                out.append(json.loads(raw))
        return out


def host_of(node: str | None) -> str | None:
    """hosta@machine / hosta-api@machine -> hosta."""
    return node.split("@")[0].removesuffix("-api") if node else None


@pytest.fixture(scope="module")
def fleet(spawn_worker, tmp_path_factory):
    root = tmp_path_factory.mktemp("hosts")
    cassette = root / "cassette.json"
    cassette.write_text(json.dumps({"version": 1, "entries": [
        {"contains": "STALLMARK", "response_model": "ChunkExtraction", "response": EXTRACTION, "delay_seconds": 10},
        {"contains": f"Visit report {TAG}", "response_model": "ChunkExtraction", "response": DOC_EXTRACTION},
        {"contains": "", "response_model": "*", "response": EXTRACTION},
    ]}))
    key = secrets.token_hex(32)
    hosts: dict = {}
    try:
        for name in HOSTS:
            env = {"ENGRAM_STATE_DIR": str(root / name), "ENGRAM_SIGNING_KEY": key,
                   "ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_API_THREADS": "2",
                   "ENGRAM_IMPROVE_SWEEP_SECONDS": "2", "ENGRAM_BEAT_LOCK_SECONDS": "6"}
            # Two pool processes: a host busy with one stage still takes a message for its own queue.
            hosts[name] = spawn_worker(env, 2, broker_of=hosts.get("hosta"), start=False)
        for name, handle in hosts.items():
            handle.start(name, queues=f"ingest,llm,embed,maintenance,api,{name}-only")
        yield Fleet(hosts, key, root)
    finally:
        for handle in reversed(list(hosts.values())):
            handle.stop()


def test_a_run_another_host_just_touched_is_not_stale_whatever_the_clocks_say(store, monkeypatch):
    """Run times come from the database's clock: a run touched by a worker whose machine runs 10
    minutes behind is not found stale by the sweep of a host with the right time (it was, and the
    sweep resumed a live run: its stages ran twice). Every worker's clock is skewed here the same
    way, which is what the old code read."""
    from datetime import datetime, timedelta, timezone

    from engram.adapters.store import runs as run_store

    class Behind(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.now(tz) - timedelta(minutes=10)

    run_id = uuid.uuid4()
    with store.unit_of_work() as uow:
        ds = uow.access.create_dataset("default", f"clock-{TAG}")
        item, _ = uow.graph.add_item(ds, uuid.uuid4().hex, "a clock test", name=None, mime=None, source=None)
        uow.runs.create_many([{"id": run_id, "pipeline": "cognify", "dataset": ds, "data_item": item,
                               "stages": ["add", "classify"], "done": {"add": {}}}])
    monkeypatch.setattr(run_store, "datetime", Behind, raising=False)  # the host behind starts a stage
    with store.unit_of_work() as uow:
        uow.runs.start_stage(run_id, "classify")
    monkeypatch.undo()
    try:
        with store.unit_of_work() as uow:  # the sweep of a host on time, with the default timeout
            stale = [r["id"] for r in uow.runs.stale(300)]
        assert run_id not in stale
    finally:  # no later sweep of the shared database may pick it up
        with store.unit_of_work() as uow:
            uow.runs.finish_run(run_id, "failed", error="clock test")


def _documents() -> list[dict]:
    people = ["Ines Varga", "Tomas Lind", "Mara Olsen", "Kofi Mensah"]
    return [{"name": f"visit-{i}.md",
             "text": f"Visit report {TAG} number {i}. {people[i % 4]} toured the Harbor Dynamics yard in "
                     f"Port Alder on day {i} and counted {17 + i} ferries under repair."} for i in range(N_DOCS)]


def _produce(fleet: Fleet, dataset: str) -> list[str]:
    """Remember the documents from a third process: its own state directory, only the Redis URL."""
    state = fleet.root / "producer"
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"),
           "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ENGRAM_STATE_DIR": str(state),
           "ENGRAM_REDIS_URL": fleet.redis_url}
    done = subprocess.run([sys.executable, "-c", PRODUCER, dataset], input=json.dumps(_documents()), env=env,
                          capture_output=True, text=True, timeout=180, cwd=fleet.root)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (state / "postgres").exists(), "the producer started a Postgres of its own"
    return json.loads(done.stdout.strip().splitlines()[-1])


def _embedded(fleet: Fleet) -> int:
    """Texts the fleet's batches and loads embedded (one counter in the shared Redis)."""
    return sum(int(fleet.redis.get(k) or 0) for k in fleet.redis.scan_iter("engram:embed:texts-embedded:*"))


def test_runs_and_embedding_batches_are_shared_by_both_hosts_and_each_run_completes_once(fleet, store):
    dataset = f"hosts-{TAG}"
    vectors_before = scalar(store, "SELECT count(*) FROM embedding_vectors")
    embedded_before = _embedded(fleet)
    run_ids = _produce(fleet, dataset)
    assert len(set(run_ids)) == N_DOCS

    def statuses() -> list[str]:
        return [r["status"] for r in rows(store, "SELECT status FROM pipeline_runs WHERE id = ANY(CAST(:r AS uuid[]))",
                                          r=run_ids)]

    wait_until(lambda: all(s in ("completed", "failed") for s in statuses()) and len(statuses()) == N_DOCS,
               timeout=240, what="every run to finish")
    assert statuses() == ["completed"] * N_DOCS
    ds = dataset_id(store, dataset)
    # Exactly once: one document per item, every stage of every run completed, nothing left queued.
    per_item = rows(store, "SELECT i.id, count(d.id) AS documents FROM data_items i LEFT JOIN documents d"
                    " ON d.data_item_id = i.id WHERE i.dataset_id = :d GROUP BY i.id", d=ds)
    assert len(per_item) == N_DOCS and {r["documents"] for r in per_item} == {1}
    stages = rows(store, "SELECT stage, status FROM stage_runs WHERE run_id = ANY(CAST(:r AS uuid[]))", r=run_ids)
    assert len(stages) == N_DOCS * 5 and {s["status"] for s in stages} == {"completed"}, stages
    # None of this test's texts is still waiting for a batch (other tests share the database).
    assert scalar(store, "SELECT count(*) FROM embedding_requests WHERE text LIKE :t", t=f"%{TAG}%") == 0

    results = fleet.results()
    stage_hosts = {host_of(r.get("worker")) for r in results
                   if r.get("name") in COGNIFY_STAGES and r.get("status") == "SUCCESS"
                   and (r.get("kwargs") or {}).get("run_id") in run_ids}
    assert stage_hosts == set(HOSTS), f"stage work ran on {stage_hosts}"
    embed_hosts = {host_of(r.get("worker")) for r in results if r.get("status") == "SUCCESS"
                   and r.get("name") in ("engram.embed.batch", "engram.cognify.embed_and_load")}
    assert embed_hosts == set(HOSTS), f"the embed queue was served by {embed_hosts}"

    # Texts embedded by the fleet = vectors it stored: no text was embedded by both hosts (a
    # duplicate embeds twice and stores one row), however the batches were split between them.
    embedded = _embedded(fleet) - embedded_before
    stored = scalar(store, "SELECT count(*) FROM embedding_vectors") - vectors_before
    missing = scalar(store, "SELECT count(*) FROM embedding_refs f JOIN data_items i ON i.id = f.data_item_id"
                     " LEFT JOIN embedding_vectors v ON (v.model, v.dimension, v.text_hash) = (f.model, f.dimension,"
                     " f.text_hash) WHERE i.dataset_id = :d AND v.text_hash IS NULL", d=ds)
    batches = {h: sum((r.get("result") or {}).get("embedded", 0) for r in results
                      if r.get("name") == "engram.embed.batch" and host_of(r.get("worker")) == h) for h in HOSTS}
    load_host = {r["kwargs"]["run_id"]: host_of(r.get("worker")) for r in results
                 if r.get("name") == "engram.cognify.embed_and_load" and r.get("status") == "SUCCESS"}
    outputs = rows(store, "SELECT run_id::text AS run, output->'embedding'->>'embedded' AS n FROM stage_runs"
                   " WHERE stage = 'embed_and_load' AND run_id = ANY(CAST(:r AS uuid[]))", r=run_ids)
    loads = {h: sum(int(o["n"] or 0) for o in outputs if load_host.get(o["run"]) == h) for h in HOSTS}
    print(f"\nTWO HOSTS embedded={embedded} stored={stored} texts embedded by batches {batches}, by loads "
          f"{loads}; loads run by host {dict((h, list(load_host.values()).count(h)) for h in HOSTS)}")
    assert embedded == stored > N_DOCS and missing == 0


def test_a_message_signed_with_the_fleet_key_runs_on_both_hosts_and_one_signed_otherwise_on_neither(fleet):
    for host in HOSTS:
        accepted = fleet.send("engram.improve.sweep_claims", {}, host)
        assert "abandoned" in accepted.get(timeout=60)
        assert host_of(fleet.bare.backend.get_task_meta(accepted.id).get("worker")) == host
        forged = fleet.send("engram.improve.sweep_claims", {}, host, key=secrets.token_hex(32))
        with pytest.raises(Exception, match="not produced by Engram"):
            forged.get(timeout=60)
        assert host_of(fleet.bare.backend.get_task_meta(forged.id).get("worker")) == host


def test_one_beat_schedules_for_both_hosts_and_its_ticks_run_on_the_other(fleet, tmp_path):
    beats = {name: Beat(fleet.hosts[name].env, tmp_path / f"beat-{name}.log") for name in HOSTS}
    entry = "improve-rerun-requests"
    try:
        leader = wait_until(lambda: next((n for n, b in beats.items() if b.sent(entry) >= 3), None),
                            timeout=120, what="a beat scheduling")
        other = next(n for n in HOSTS if n != leader)
        assert beats[other].proc.poll() is None and beats[other].sent() == 0, beats[other].log()

        def ran_on(host: str) -> bool:
            return any(r.get("name") == "engram.improve.sweep_reruns" and r.get("status") == "SUCCESS"
                       and host_of(r.get("worker")) == host for r in fleet.results())

        # The leader's ticks are served by the fleet: the other host's workers run them too.
        wait_until(lambda: ran_on(other), timeout=60, what=f"a tick of {leader}'s beat to run on {other}")
        assert beats[other].sent() == 0
    finally:
        for beat in beats.values():
            beat.stop()


def test_an_improve_claim_held_by_one_host_is_respected_by_the_other(fleet, store):
    dataset = f"hosts-claim-{TAG}"
    client = fleet.hosts["hosta"].client
    turn = client.remember_turn(dataset=dataset, session_id="s", question="STALLMARK: who runs the yard?",
                                answer="Alice Moreau")
    assert turn.status == "session_stored"
    ds = dataset_id(store, dataset)
    # The holder is inside its improve run, waiting on the slow extraction of the turn.
    wait_until(lambda: [c for c in claims(store, dataset) if c["status"] == "held"]
               and rows(store, "SELECT 1 FROM stage_runs s JOIN pipeline_runs p ON p.id = s.run_id WHERE"
                        " p.dataset_id = :d AND s.stage = 'extract_graph_and_summarize' AND s.status = 'running'",
                        d=ds), what="an improve claim held mid-run")
    (held,) = claims(store, dataset)
    holder = describe(held["claim_value"])
    assert host_of(holder.get("node")) in HOSTS, holder
    other = next(h for h in HOSTS if h != host_of(holder["node"]))
    answer = fleet.send("engram.improve.start", {"dataset_id": str(ds), "session_ids": ["s"],
                                                 "trigger": "explicit"}, other).get(timeout=60)
    assert (answer["status"], answer["rerun_requested"]) == ("busy", True), answer
    assert holder["node"] in answer["reason"]
    # The holder finishes; the request the other host left becomes a run of its own afterwards.
    wait_until(lambda: claims(store, dataset)[0]["status"] == "released", what="the holder to release")
    if not fully_processed(store, dataset, "s"):
        fleet.send("engram.improve.sweep_reruns", {}, other).get(timeout=60)  # what beat does with a leftover request
    wait_until(lambda: fully_processed(store, dataset, "s"), what="the session fully processed")
    taken = claims(store, dataset)
    assert all(c["status"] == "released" for c in taken)
    for before, after in zip(taken, taken[1:]):  # one holder at a time
        assert after["claimed_at"] >= before["released_at"]


@pytest.fixture
def other_database(services):
    """A second, migrated Engram database on the same server (what a machine whose
    ENGRAM_DATABASE_URL is unset or wrong would use)."""
    import psycopg

    from engram.adapters.store import migrate

    name = f"engram_stray_{uuid.uuid4().hex[:6]}"
    admin = services.database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = services.database_url.replace("/engram?", f"/{name}?")
    assert url != services.database_url
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    migrate.upgrade(url)
    yield url
    from engram.adapters.store.engine import dispose_engine

    dispose_engine()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.mark.parametrize("apart", ["key", "database", "redis"])
def test_a_third_host_configured_apart_is_refused_at_start(fleet, spawn_worker, request, apart):
    """Without the fleet's ENGRAM_SIGNING_KEY a machine makes a key of its own (every message between
    it and the fleet refused); without its ENGRAM_DATABASE_URL it would write accepts from the shared
    broker into a database nobody else reads; with another lock Redis it would elect its own beat
    and claims. It stops at once, naming the workers it disagrees with and the fix."""
    stray = spawn_worker({"ENGRAM_STATE_DIR": str(fleet.root / f"stray-{apart}"), "ENGRAM_SIGNING_KEY": fleet.key},
                         1, broker_of=fleet.hosts["hosta"], start=False)
    if apart == "key":
        stray.env.pop("ENGRAM_SIGNING_KEY")
    elif apart == "database":
        stray.env["ENGRAM_DATABASE_URL"] = request.getfixturevalue("other_database")
    else:  # the fleet's broker, another Redis database for locks and results
        stray.env["ENGRAM_BROKER_URL"] = fleet.redis_url
        stray.env["ENGRAM_REDIS_URL"] = fleet.redis_url.rsplit("/", 1)[0] + "/0"
        assert stray.env["ENGRAM_REDIS_URL"] != fleet.redis_url
    try:
        with pytest.raises(RuntimeError, match="worker exited") as refused:
            stray.start(f"stray{apart}")
    finally:
        stray.stop()
    message = str(refused.value)
    said, fix = {"key": ("another key", "set ENGRAM_SIGNING_KEY to the fleet's key"),
                 "database": ("another Postgres database", "set ENGRAM_DATABASE_URL to the fleet's database"),
                 "redis": ("another Redis", "set ENGRAM_REDIS_URL to the fleet's Redis")}[apart]
    assert said in message and fix in message, message
    assert "hosta@" in message and "hostb@" in message


def test_no_host_kept_anything_in_its_state_directory(fleet):
    """With the URLs and the key given, a host's state directory stays empty: nothing of the
    fleet lives on one machine's disk."""
    for name in HOSTS:
        kept = sorted(str(p.relative_to(fleet.root)) for p in (fleet.root / name).rglob("*")) \
            if (fleet.root / name).exists() else []
        assert kept == [], kept
