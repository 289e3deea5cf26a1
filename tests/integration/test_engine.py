"""The stage engine with a real worker: a stage whose persist step raises ends `failed` with
that error at once (no heartbeat sweep needed), in every flow.

Postgres itself refuses the persist: a trigger on the table the stage writes raises for the
test's dataset only. The refusal is not transient, so it is not retried.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager

from improve_helpers import runs, stages, wait_until
from sqlalchemy import text

from engram.settings import reset_settings
from engram.tasks.client import RunHandle

REFUSAL = "refused by the test trigger"


@contextmanager
def refusing(store, table: str, event: str, dataset_id: uuid.UUID, also: str = "TRUE"):
    """Postgres raises on `event` (INSERT / UPDATE) of `table` rows of this dataset (where `also`)."""
    name = f"refuse_{uuid.uuid4().hex[:10]}"
    with store.unit_of_work() as uow:
        uow.conn.execute(text(
            "CREATE OR REPLACE FUNCTION engram_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN RAISE EXCEPTION '{REFUSAL} on %', TG_TABLE_NAME; END $$"))
        uow.conn.execute(text(
            f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW"
            f" WHEN (NEW.dataset_id = '{dataset_id}' AND {also}) EXECUTE FUNCTION engram_test_refuse()"))
    try:
        yield
    finally:
        with store.unit_of_work() as uow:
            uow.conn.execute(text(f"DROP TRIGGER IF EXISTS {name} ON {table}"))


def _dataset(store, name: str) -> uuid.UUID:
    with store.unit_of_work() as uow:
        return uow.access.create_dataset("default", name)


def _stage(status, name: str):
    return next(s for s in status.stages if s.stage == name)


def test_cognify_load_refused_fails_the_run_at_once(client, store, dataset_name):
    dataset = _dataset(store, dataset_name)
    with refusing(store, "documents", "INSERT", dataset):
        [status] = client.remember("Alice Moreau is the CEO of Harbor Dynamics.", dataset=dataset_name).wait(
            timeout=300)
    assert status.status == "failed"
    failed = _stage(status, "embed_and_load")
    assert failed.status == "failed" and REFUSAL in failed.error
    assert status.error.startswith("embed_and_load: ") and REFUSAL in status.error
    with store.unit_of_work() as uow:  # the refused transaction wrote nothing
        assert uow.conn.execute(text("SELECT count(*) FROM chunks WHERE dataset_id = :d"), {"d": dataset}).scalar() == 0


def test_a_stage_whose_inputs_cannot_be_read_fails_its_run_at_once(store, dataset_name):
    """A pipeline stage reads its inputs in its opening transaction. When that read fails (here
    the run's item is gone), the failure is recorded like any other: the stage and the run end
    `failed` with the reason, no stage is left `running`, and the task raises (its chain stops)."""
    import pytest

    from engram.pipelines.cognify.flow import open_run
    from engram.pipelines.errors import BadInput
    from engram.tasks.engine import TASKS

    dataset = _dataset(store, dataset_name)
    run_id = uuid.uuid4()
    with store.unit_of_work() as uow:
        open_run(uow, run_id, dataset, uuid.uuid4(), options={}, params={})  # an item that does not exist
    with pytest.raises(BadInput, match="forgotten"):
        TASKS["engram.cognify.classify"](run_id=str(run_id))  # in this process, as the worker runs it
    with store.unit_of_work() as uow:
        run, stages = uow.runs.get(run_id), {s["stage"]: s for s in uow.runs.stages(run_id)}
    assert run["status"] == "failed" and "forgotten" in run["error"]
    assert stages["classify"]["status"] == "failed" and "forgotten" in stages["classify"]["error"]
    assert not [s for s in stages.values() if s["status"] == "running"]


def test_graph_pass_persist_refused_fails_its_stage_at_once(client, store, dataset_name):
    dataset = _dataset(store, dataset_name)
    client.remember("Alice Moreau is the CEO of Harbor Dynamics. Bob Stone is the CEO of Harbor Dynamics.",
                    dataset=dataset_name).wait(timeout=300)
    with refusing(store, "edge_intervals", "INSERT", dataset):
        accepted = client.call("engram.maintenance.supersede", dataset=dataset_name,
                               functional_relationships={"ceo_of": "target"})
        status = RunHandle(client, uuid.UUID(accepted["run_id"])).wait(timeout=300)
    # An optional pass: its failure is the stage's; the run (whose data stays valid) completes.
    failed = _stage(status, "temporal_supersession")
    assert failed.status == "failed" and REFUSAL in failed.error
    assert status.status == "completed" and REFUSAL in status.error


def test_capture_persist_refused_fails_its_stage_at_once(client, store, dataset_name):
    dataset = _dataset(store, dataset_name)
    with refusing(store, "capture_objects", "UPDATE", dataset, also="NEW.stage = 'normalized'"):
        status = client.capture("Pick a queue", dataset=dataset_name, template="decision",
                                template_fields={"chosen": "Redis streams", "rationale": "already deployed"},
                                wait=True, timeout=300)
    normalize = _stage(status, "normalize")
    assert normalize.status == "failed" and REFUSAL in normalize.error
    assert status.status == "partial"
    run = client.run_status(status.run_id)  # the run, not only the capture view, is partial
    assert run.status == "partial" and REFUSAL in run.error


def test_improve_persist_refused_fails_its_stage_at_once(client, store, dataset_name):
    dataset = _dataset(store, dataset_name)
    with refusing(store, "session_improve_state", "UPDATE", dataset, also="NEW.watermark_seq > OLD.watermark_seq"):
        stored = client.remember_turn(dataset=dataset_name, session_id="s1", question="Who runs Harbor Dynamics?",
                                      answer="Alice Moreau is the CEO of Harbor Dynamics.")
        assert stored.improve == "requested"  # a session's first turn starts an improve run
        [run] = wait_until(lambda: [r for r in runs(store, dataset_name) if r["status"] != "running"],
                           what="the improve run to end")
    got = stages(store, run["id"])
    # persist_session_qa is fatal: its failure aborts the later stages and the run.
    assert got["persist_session_qa"]["status"] == "failed" and REFUSAL in got["persist_session_qa"]["error"]
    assert run["status"] == "aborted" and REFUSAL in run["error"]
    assert got["update_user_preferences"]["reason"] == "aborted: fatal stage persist_session_qa failed"


def test_the_sweep_resumes_an_abandoned_whole_dataset_pass(client, store, dataset_name):
    from engram.pipelines.maintenance.flow import DATASET_SCOPE, MAINTENANCE, supersession_options

    dataset = _dataset(store, dataset_name)
    client.remember("Alice Moreau is the CEO of Harbor Dynamics. Bob Stone is the CEO of Harbor Dynamics.",
                    dataset=dataset_name).wait(timeout=300)
    run_id, options = uuid.uuid4(), supersession_options({"ceo_of": "target"})
    with store.unit_of_work() as uow:  # a pass whose worker died mid-stage: running, silent for an hour
        uow.runs.create(run_id, MAINTENANCE.name, MAINTENANCE.stages_for(options), dataset,
                        params={"options": options, "scope": DATASET_SCOPE})
        uow.conn.execute(text("UPDATE pipeline_runs SET status = 'running', heartbeat_at = now() - interval '1 hour'"
                              " WHERE id = :r"), {"r": run_id})
        uow.conn.execute(text("UPDATE stage_runs SET status = 'running', attempts = 1 WHERE run_id = :r"),
                         {"r": run_id})
    assert str(run_id) in client.call("engram.maintenance.sweep_runs")["resumed"]
    status = RunHandle(client, run_id).wait(timeout=300)
    assert status.status == "completed" and _stage(status, "temporal_supersession").status == "completed"


def test_every_flow_has_its_persist_failure_case_here():
    """Declaring a flow means adding its case above."""
    from engram.pipelines.flows import FLOWS

    assert {f.name for f in FLOWS} == {"cognify", "maintenance", "capture", "improve"}


def test_a_stage_rides_out_an_unreachable_lock_redis_after_its_commit(store, services, dataset_name, monkeypatch):
    """Redis (locks, counters, the embed queue's "batch queued" flag) gone while Postgres is up:
    extraction commits, then its after-commit hook cannot reach Redis. The stage still ends
    `completed` and returns, so Celery sends the chain's next link; an item's load does not
    need Redis either. (A hook that raised here stopped the chain: the run sat between stages
    with extraction done until the sweep, as a Redis restart mid-ingest showed.)"""
    import socket

    from engram.adapters.redis_client import reset_redis
    from engram.models.payloads import RememberItem
    from engram.pipelines.cognify.flow import COGNIFY, open_run
    from engram.pipelines.cognify.ingest import prepare
    from engram.tasks.engine import TASKS

    dataset = _dataset(store, dataset_name)
    item = prepare(RememberItem(text="Mira Solberg founded Lantern Quarry Works in Port Alder in 1988."), 10**6, 0)
    run_id = uuid.uuid4()
    with store.unit_of_work() as uow:
        [(item_id, _)] = uow.graph.add_items(dataset, [{"digest": item.digest, "content": item.text, "name": None,
                                                        "mime": item.mime, "source": item.source}])
        stages = open_run(uow, run_id, dataset, item_id, options={}, params={"doc_type": item.doc_type, "name": None})
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    monkeypatch.setenv("ENGRAM_REDIS_URL", f"redis://127.0.0.1:{dead}/0")
    reset_settings()
    reset_redis()
    try:
        outs = {s: TASKS[COGNIFY.stage(s).task](run_id=str(run_id)) for s in stages}
    finally:
        monkeypatch.setenv("ENGRAM_REDIS_URL", services.redis_url)
        reset_settings()
        reset_redis()
    assert all(o["status"] in ("completed", "skipped") for o in outs.values()), outs
    with store.unit_of_work() as uow:
        assert uow.runs.get(run_id)["status"] == "completed"
        assert uow.conn.execute(text("SELECT count(*) FROM chunks WHERE dataset_id = :d"), {"d": dataset}).scalar() == 1
