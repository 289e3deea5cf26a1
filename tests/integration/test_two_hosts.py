"""Two hosts: nothing the fleet relies on is kept on, or measured by, one machine
(docs/operations.md#past-one-machine)."""

from __future__ import annotations

import uuid

TAG = uuid.uuid4().hex[:8]


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
