"""The capture lane end to end (SPEC 9): a real worker, real Postgres, a replay LLM.

Object ids are deterministic (dataset + content), so the cassette can name them in the
link proposals it replays before the objects exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from engram.models.payloads import CaptureRequest
from engram.pipelines import ids
from engram.tasks.client import EngramError

ENTRIES: list[dict] = []


@pytest.fixture(scope="module")
def cassette(tmp_path_factory):
    path = tmp_path_factory.mktemp("capture") / "cassette.json"
    write(path)
    return path


def write(path, extra: list[dict] | None = None) -> None:
    # Replay answers the first matching entry: the newest entries go first.
    Path(path).write_text(json.dumps({"version": 1, "entries": (extra or []) + ENTRIES}))


@pytest.fixture(scope="module")
def replay(spawn_worker, cassette):
    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_TASK_MAX_RETRIES": "0", "ENGRAM_LLM_MAX_REASKS": "0"}
    handle = spawn_worker(env, concurrency=2)
    yield handle
    handle.stop()


def object_id(dataset: str, **fields) -> uuid.UUID:
    draft = CaptureRequest(dataset=dataset, **fields).draft()
    return ids.data_item_id(ids.dataset_id(ids.user_id("default"), dataset), draft.digest)


def classify(title: str, kind: str, entities: list[dict] | None = None, summary: str | None = None) -> dict:
    return {"contains": f"Title: {title}", "response_model": "CaptureClassification",
            "response": {"type": kind, "summary": summary or f"{title}.", "tags": ["infra"], "project": "",
                         "entities": entities or [], "confidence": 0.8, "properties": {}}}


def links(body: str, *proposals: tuple[uuid.UUID, uuid.UUID, str, float]) -> dict:
    return {"contains": body, "response_model": "LinkProposals", "response": {"relationships": [
        {"from_id": str(a), "to_id": str(b), "rel_type": r, "confidence": c} for a, b, r, c in proposals]}}


def edges(store, dataset: str) -> list[dict]:
    with store.unit_of_work() as uow:
        did = uow.access.find_dataset(dataset, "default")
        return [dict(r) for r in uow.conn.execute(text(
            "SELECT source_id, target_id, relationship, properties, provenance FROM edges"
            " WHERE dataset_id = :d ORDER BY relationship, source_id, target_id"), {"d": did}).mappings()]


def stage(status, name):
    return next(s for s in status.stages if s.stage == name)


def engram_cli(handle, *args: str) -> subprocess.CompletedProcess:
    """The `engram` CLI as a user runs it, against this worker's broker."""
    env = dict(os.environ, ENGRAM_REDIS_URL=handle.redis_url, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "engram.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300)


# ------------------------------------------------------------------ offline (the shared worker)


def test_offline_capture_with_a_template_completes(client, store, dataset_name):
    status = client.capture("Pick a queue", dataset=dataset_name, template="decision",
                            template_fields={"chosen": "Redis streams", "rationale": "already deployed"},
                            entities=[{"name": "Redis", "type": "technology"}], wait=True)
    assert status.status == "complete", [(s.stage, s.status, s.error) for s in status.stages]
    assert [s.stage for s in status.stages] == ["admit", "normalize", "link", "enrich", "reason"]
    with store.unit_of_work() as uow:
        obj = uow.capture.get(status.object_id)
    assert (obj["obj_type"], obj["summary"], obj["confidence"], obj["tier"]) == ("decision", "Pick a queue", 0.0,
                                                                                 "archive")
    assert obj["properties"] == {"chosen": "Redis streams", "rationale": "already deployed"}
    assert "## Chosen\nRedis streams" in obj["text"]
    [mention] = edges(store, dataset_name)
    assert mention["relationship"] == "mentions" and mention["source_id"] == status.object_id


def test_bad_capture_payloads_are_clear_errors_and_write_nothing(client, store, dataset_name):
    with pytest.raises(EngramError, match="template 'fix' requires symptom"):
        client.capture("Broken build", dataset=dataset_name, template="fix", template_fields={"resolution": "x"})
    with pytest.raises(EngramError, match="entities is not valid JSON"):
        client.capture("Broken build", dataset=dataset_name, content="x", entities='[{"name": ')
    with store.unit_of_work() as uow:
        assert uow.access.find_dataset(dataset_name, "default") is None


# ------------------------------------------------------------------ the replay worker


def test_captured_decision_is_recalled_with_type_and_edges_and_reasoned(replay, store, dataset_name):
    old = {"title": "Adopt Memcached for sessions", "content": "Sessions live in Memcached.", "type": "decision"}
    new = {"title": "Adopt Valkey for sessions", "content": "Sessions move to Valkey; Memcached lost data.",
           "type": "decision", "entities": [{"name": "Valkey", "type": "technology"}]}
    old_id, new_id = object_id(dataset_name, **old), object_id(dataset_name, **new)
    ENTRIES.extend([
        classify(old["title"], "decision"), classify(new["title"], "decision"),
        links("Sessions move to Valkey", (new_id, old_id, "supersedes", 0.9), (new_id, old_id, "contradicts", 0.8),
              (old_id, new_id, "ledTo", 0.7), (new_id, old_id, "supports", 0.4)),
    ])
    write(replay.env["ENGRAM_LLM_MODEL"].split(":", 1)[1])
    assert replay.client.capture(dataset=dataset_name, wait=True, **old).status == "complete"
    done = replay.client.capture(dataset=dataset_name, wait=True, **new)
    assert done.status == "complete", done
    assert stage(done, "link").llm_calls == 1
    found = {(e["source_id"], e["target_id"], e["relationship"]): e for e in edges(store, dataset_name)}
    assert (new_id, old_id, "supports") not in found  # confidence 0.4 is not above 0.5
    inferred = {k: v["properties"]["provenance"] for k, v in found.items() if v["properties"].get("origin") == "reasoner"}
    assert set(inferred) == {(old_id, new_id, "contradicts"), (new_id, old_id, "caused_by")}
    assert inferred[(old_id, new_id, "contradicts")]["rule"] == "symmetric_contradicts"
    assert inferred[(new_id, old_id, "caused_by")]["premises"] == [
        str(ids.edge_id(ids.dataset_id(ids.user_id("default"), dataset_name), old_id, new_id, "led_to"))]

    result = replay.client.recall("Which store holds sessions?", datasets=[dataset_name], object_types=["decision"])
    assert result.search_type == "CAPTURES"
    by_id = {i.capture.id: i.capture for i in result.items}
    assert set(by_id) == {old_id, new_id}
    valkey = by_id[new_id]
    assert valkey.type == "decision" and valkey.tags == ["infra"] and valkey.tier == "recall"
    assert {(e.predicate, e.direction, e.other_name) for e in valkey.edges} >= {
        ("supersedes", "out", "Adopt Memcached for sessions"), ("contradicts", "in", "Adopt Memcached for sessions"),
        ("mentions", "out", "Valkey")}
    # Plain recall finds the object's text and attaches the object too; graph lanes see its edges.
    hybrid = replay.client.recall("Valkey sessions Memcached", datasets=[dataset_name], search_type="CHUNKS")
    assert any(i.capture and i.capture.type == "decision" for i in hybrid.items)
    graph = replay.client.recall("Adopt Valkey supersedes", datasets=[dataset_name], search_type="TRIPLET_COMPLETION")
    assert "Adopt Valkey for sessions supersedes Adopt Memcached for sessions" in [i.text for i in graph.items]
    assert replay.client.recall("sessions", datasets=[dataset_name], object_types=["lesson"]).items == []

    # Reasoning again adds nothing (idempotent): reprocess reruns every stage of a complete capture.
    before = edges(store, dataset_name)
    again = replay.client.reprocess(new_id, dataset=dataset_name, wait=True)
    assert again.status == "complete"
    with store.unit_of_work() as uow:
        assert uow.runs.stage_output(again.run_id, "reason")["inferred"] == 0
    assert edges(store, dataset_name) == before


def test_failed_link_is_partial_and_reprocess_resumes_there_with_the_callers_entities(replay, store, dataset_name):
    other = {"title": "Kafka retention lesson", "content": "Retention was too short.", "type": "lesson"}
    fix = {"title": "Consumer lag fix", "content": "Lag came from a slow Kafka consumer group.", "type": "fix",
           "entities": [{"name": "Kafka", "type": "technology"}], "project": "pipeline"}
    other_id, fix_id = object_id(dataset_name, **other), object_id(dataset_name, **fix)
    path = replay.env["ENGRAM_LLM_MODEL"].split(":", 1)[1]
    ENTRIES.extend([classify(other["title"], "lesson"),
                    classify(fix["title"], "fix", entities=[{"name": "Zookeeper", "type": "technology"}])])
    broken = {"contains": "slow Kafka consumer", "response_model": "LinkProposals", "response": "not json"}
    write(path, [broken])
    replay.client.capture(dataset=dataset_name, wait=True, **other)
    status = replay.client.capture(dataset=dataset_name, wait=True, **fix)
    assert status.status == "partial"
    assert stage(status, "link").status == "failed" and "LinkProposals" in stage(status, "link").error
    assert stage(status, "enrich").status == "completed" and stage(status, "reason").status == "completed"
    with store.unit_of_work() as uow:
        assert uow.capture.get(fix_id)["obj_type"] == "fix"  # admitted and kept
    assert [e for e in edges(store, dataset_name) if e["source_id"] == fix_id] == []
    # The run itself is partial: engram.status, `engram status` and its --json say so.
    run = replay.client.run_status(status.run_id)
    assert run.status == "partial" and run.done and run.error.startswith("optional stage failed: link: ")
    out = engram_cli(replay, "status", str(status.run_id))
    assert out.returncode == 0 and " partial " in out.stdout, out.stdout + out.stderr
    out = engram_cli(replay, "status", str(status.run_id), "--json")
    assert [r["status"] for r in json.loads(out.stdout)] == ["partial"]
    listed = replay.client.dataset_overview(dataset_name).runs
    assert {r.run_id: r.status for r in listed}[status.run_id] == "partial"

    write(path, [links("slow Kafka consumer", (fix_id, other_id, "causedBy", 0.9))])
    out = engram_cli(replay, "reprocess", str(fix_id), "-d", dataset_name)
    assert out.returncode == 0 and f"reprocessed {fix_id}: complete" in out.stdout, out.stdout + out.stderr
    resumed = replay.client.capture_status(fix_id, status.run_id)
    assert resumed.status == "complete", resumed
    assert resumed.run_id == status.run_id
    run = replay.client.run_status(status.run_id)
    assert run.status == "completed" and run.error is None
    assert stage(resumed, "normalize").attempts == 1  # not redone
    assert stage(resumed, "link").attempts == 2
    assert stage(resumed, "enrich").attempts == 2 and stage(resumed, "reason").attempts == 2
    mine = {(e["relationship"], e["target_id"]) for e in edges(store, dataset_name) if e["source_id"] == fix_id}
    kafka = ids.entity_id(ids.dataset_id(ids.user_id("default"), dataset_name), "Kafka")
    assert mine == {("mentions", kafka), ("caused_by", other_id)}  # the caller's Kafka, not the model's Zookeeper
    with store.unit_of_work() as uow:
        # Counted by enrich, before reason adds the inverse ledTo: mentions and causedBy.
        assert uow.capture.get(fix_id)["connection_count"] == 2


def test_forget_leaves_no_copy_of_a_captured_object(client, store, dataset_name):
    from engram.tests.integration.test_forget import copies

    kept = client.capture("Keep Quillbrook", dataset=dataset_name, content="Quillbrook stays on Postgres.",
                          type="decision", entities=[{"name": "Postgres", "type": "technology"}], wait=True)
    done = client.capture("Drop Vorpaline", dataset=dataset_name, content="Vorpaline notes about Glimmerdex.",
                          type="decision", entities=[{"name": "Glimmerdex", "type": "technology"}],
                          properties={"owner": "vorpaline-team"}, wait=True)
    with store.unit_of_work() as uow:  # a link and an inference touching the dropped object
        did = uow.access.find_dataset(dataset_name, "default")
        uow.capture.upsert_edges(did, [{"id": uuid.uuid4(), "source_id": done.object_id, "target_id": kept.object_id,
                                        "relationship": "contradicts", "edge_text": "Drop Vorpaline contradicts Keep",
                                        "properties": {"predicate": "contradicts"}}],
                                 [ids.chunk_id(ids.document_id(done.object_id), 0)], {})
    assert client.reprocess(kept.object_id, dataset=dataset_name, wait=True).status == "complete"
    assert {"capture_objects.title", "capture_requests.request", "entities.name", "edges.edge_text"} <= set(
        copies(store, ("vorpaline", "glimmerdex")))

    client.forget(dataset_name, data_item_id=done.object_id)

    assert copies(store, ("vorpaline", "glimmerdex")) == []
    assert client.run_status(done.run_id).status == "forgotten"
    with store.unit_of_work() as uow:
        assert uow.capture.get(done.object_id) is None
        kept_row = uow.capture.get(kept.object_id)
        assert kept_row is not None and kept_row["stage"] == "reasoned"
        assert uow.conn.execute(text("SELECT count(*) FROM entities WHERE id = :k"), {"k": kept.object_id}).scalar() == 1


def test_docs_capture_examples_run_verbatim(worker, store):
    import os
    import subprocess
    import sys

    doc = (Path(__file__).parents[2] / "docs" / "capture.md").read_text()
    block = next(b for b in doc.split("```bash\n")[1:] if b.startswith("engram capture"))
    lines = [line for line in block.split("```")[0].splitlines() if line.strip()]
    assert len([line for line in lines if line.startswith("engram capture")]) == 6
    env = dict(worker.env, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for line in lines:
        done = subprocess.run(line, shell=True, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        if line.startswith("engram capture"):
            assert ": complete admit:completed normalize:completed" in " ".join(done.stdout.split()), done.stdout
    with store.unit_of_work() as uow:
        types = uow.conn.execute(text("SELECT obj_type, count(*) FROM capture_objects o JOIN datasets d"
                                      " ON d.id = o.dataset_id WHERE d.name = 'team-notes' GROUP BY 1")).all()
    assert dict(types) == {t: 1 for t in ("session", "fix", "decision", "lesson", "research", "idea")}


class FlowerLike:
    """Every task event of a worker's broker, as Flower receives them (a thread with an EventReceiver)."""

    def __init__(self, app):
        import threading

        self.app, self.events, self.ready = app, [], threading.Event()
        self.receiver = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from celery.events import EventReceiver

        ready = self.ready

        class Receiver(EventReceiver):
            def on_consume_ready(self, *args, **kwargs):
                super().on_consume_ready(*args, **kwargs)
                ready.set()

        with self.app.connection_for_read() as conn:
            self.receiver = Receiver(conn, handlers={"*": self.events.append}, app=self.app)
            self.receiver.capture(limit=None, timeout=None, wakeup=True)

    def __enter__(self) -> FlowerLike:
        self.thread.start()
        assert self.ready.wait(60), "event receiver never consumed"
        return self

    def __exit__(self, *exc) -> None:
        if self.receiver is not None:
            self.receiver.should_stop = True
        self.thread.join(10)

    def tasks(self) -> list[dict]:
        return [e for e in list(self.events) if str(e.get("type", "")).startswith("task-")]


def test_forget_of_a_linked_capture_leaves_its_id_in_no_stage_output_event_or_result(replay, store, dataset_name,
                                                                                     services):
    import redis
    from celery import Celery

    from engram.tests.integration.improve_helpers import wait_until
    from engram.tests.integration.test_forget import copies, redis_copies

    cause = {"title": "Brittle Quenwick cache", "content": "The Quenwick cache drops keys under load.",
             "type": "lesson"}
    fix = {"title": "Quenwick eviction fix", "content": "Pinned the Quenwick eviction policy to stop key loss.",
           "type": "fix"}
    cause_id, fix_id = object_id(dataset_name, **cause), object_id(dataset_name, **fix)
    ENTRIES.extend([classify(cause["title"], "lesson"), classify(fix["title"], "fix")])
    path = replay.env["ENGRAM_LLM_MODEL"].split(":", 1)[1]
    write(path, [links("Pinned the Quenwick", (fix_id, cause_id, "causedBy", 0.9))])
    bare = Celery(broker=replay.redis_url, backend=replay.redis_url)  # a producer that never forgets a result
    with FlowerLike(replay.app) as flower:
        accept = bare.send_task("engram.capture", kwargs={"dataset": dataset_name, "create_dataset": True, **cause})
        accepted = accept.get(timeout=120)
        assert replay.client.capture_status(cause_id, uuid.UUID(accepted["run_id"])).status == "complete"
        done = replay.client.capture(dataset=dataset_name, wait=True, **fix)
        assert done.status == "complete", done
        with store.unit_of_work() as uow:
            assert {"source": str(fix_id), "target": str(cause_id), "predicate": "causedBy"} in uow.runs.stage_output(
                done.run_id, "link")["edges"]
        answer = bare.send_task("engram.recall", kwargs={"question": "Why does the Quenwick cache lose keys?",
                                                         "datasets": [dataset_name], "object_types": ["lesson"]})
        assert str(cause_id) in json.dumps(answer.get(timeout=120))
        # An answer stays only ENGRAM_SHORT_RESULT_TTL_SECONDS in the result backend.
        results = redis.Redis.from_url(replay.redis_url)
        short = replay.settings.short_result_ttl_seconds  # set just after the result is stored
        wait_until(lambda: 0 < results.ttl(f"celery-task-meta-{answer.id}") <= short, what="the answer's short TTL")
        assert results.ttl(f"celery-task-meta-{accept.id}") > short
        needle = str(cause_id)
        assert "stage_runs.output" in copies(store, (needle,))  # the fix's link output, among others
        assert redis_copies(services, (needle,))  # the accept's and the recall's results

        replay.client.forget(dataset_name, data_item_id=cause_id)
        def forgotten() -> bool:
            forgets = {e["uuid"] for e in flower.tasks() if e.get("name") == "engram.forget"}
            return any(e["type"] == "task-succeeded" and e["uuid"] in forgets for e in flower.tasks())

        wait_until(forgotten, what="the forget's task-succeeded event")  # every earlier event is in by then

    assert copies(store, (needle,)) == []
    assert redis_copies(services, (needle,)) == []
    events = flower.tasks()
    shown = json.dumps(events).lower()
    assert needle not in shown and "quenwick" not in shown  # neither the id nor any memory text
    # Still useful: names, the dataset, run ids and counts.
    received = [e for e in events if e["type"] == "task-received"]
    assert {"engram.capture", "engram.recall", "engram.forget"} <= {e["name"] for e in received}
    assert any(dataset_name in e["kwargs"] for e in received if e["name"] == "engram.recall")
    assert any(str(done.run_id) in e.get("result", "") for e in events if e["type"] == "task-succeeded")
    with store.unit_of_work() as uow:
        assert uow.runs.stage_output(done.run_id, "link")["edges"] == []  # the kept object's link output
        assert uow.capture.get(fix_id) is not None
