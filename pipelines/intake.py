"""The intake rule, in one place: which dataset a write goes to, and what becomes of each item.

`writable_dataset` creates the caller's own dataset when asked, then authorises `write` (the
producer tasks remember, capture and a session turn). `admit` stores items (deduplicated by
content hash per dataset) and decides, per item, which cognify run carries it; remember, the
improve stages' documents (`Ports.add_document`) and persist_session_qa's entries all call it.

The decision for each item, by its latest run:

| the item's latest run        | redelivered = False          | redelivered = True               |
|------------------------------|------------------------------|----------------------------------|
| none (a new item, or no run) | new: a new run, start it     | new: a new run, start it         |
| forgotten (a tombstone)      | new: a new run, start it     | new: a new run, start it         |
| pending                      | leave: its chain is queued   | resume: start its pending stages |
| running                      | leave: its worker has it     | leave: its worker has it         |
| completed                    | leave                        | leave                            |
| failed                       | reopen: start what is undone | reopen: start what is undone     |
| decided earlier in this call | reuse: start nothing more    | reuse: start nothing more        |

Every row but "new" reports `duplicate=True`; "leave" reports the run's own status, "reuse" the
first occurrence's, the others `pending`.

`redelivered` says this call may repeat an earlier attempt that committed its runs and then
lost their start: remember passes it on a Celery retry or a broker redelivery; the improve
stages pass True always, since they start their documents' runs themselves right after their
own commit, so a pending run they meet was most likely left by an earlier attempt. Starting a
pending run again on redelivery is what keeps an accepted item from being lost (the store cannot
tell a queued chain from a lost one); should both exist, the second chain skips every stage the
first has done, and a stage both reach at once writes the same rows (every stage is idempotent).
Without a redelivery a pending run's chain is in a queue, so it is not started twice; a running
or completed run is never started here (a running run whose worker died is resumed by the
sweep, engram.maintenance.sweep_runs).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from engram.pipelines.cognify.flow import run_row

Decision = Literal["new", "reuse", "resume", "leave", "reopen"]


@dataclass(frozen=True)
class Intake:
    """What to admit into an authorised dataset: items as `prepare` returns them (digest, text,
    name, mime, source, doc_type) and what every new run of them carries."""

    dataset_id: uuid.UUID
    items: Sequence
    redelivered: bool = False
    options: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)  # extra run params (e.g. the improve run)
    node_sets: Sequence[str] = ()
    importance: float = 0.5


@dataclass(frozen=True)
class Admitted:
    """One item's outcome, in request order."""

    run_id: uuid.UUID
    data_item_id: uuid.UUID
    name: str | None
    decision: Decision
    status: str
    stages: tuple[str, ...] = ()  # what this call starts for it (empty: nothing)

    @property
    def duplicate(self) -> bool:
        return self.decision != "new"


@dataclass(frozen=True)
class Admission:
    items: list[Admitted]
    new_runs: int

    @property
    def to_start(self) -> list[tuple[uuid.UUID, list[str]]]:
        """Runs to enqueue (or run inline) once the unit of work has committed."""
        return [(a.run_id, list(a.stages)) for a in self.items if a.stages]


def writable_dataset(uow, name: str, user: str, create: bool) -> uuid.UUID:
    """The dataset `user` may write under `name`, made first as the user's own when `create`."""
    if create and uow.access.find_own(name, user) is None:
        uow.access.create_dataset(user, name)
    return uow.access.authorise(name, user, "write")


def admit(uow, req: Intake) -> Admission:
    """Store the items and decide each one's run (the table above); new runs are written at once."""
    added = uow.graph.add_items(req.dataset_id, [
        {"digest": i.digest, "content": i.text, "name": i.name, "mime": i.mime, "source": i.source}
        for i in req.items], node_sets=req.node_sets, importance=req.importance)
    decided: dict[uuid.UUID, Admitted] = {}
    out: list[Admitted] = []
    new_rows: list[dict] = []
    for item, (item_id, created) in zip(req.items, added):
        if item_id in decided:  # the same content twice in one call: one run
            first = decided[item_id]
            out.append(Admitted(first.run_id, item_id, item.name, "reuse", first.status))
            continue
        previous = None if created else uow.runs.latest_for_item(item_id)
        admitted = _existing(uow, previous, item_id, item.name, req.redelivered)
        if admitted is None:
            row = run_row(uuid.uuid4(), req.dataset_id, item_id, options=req.options, duplicate=not created,
                          params={**req.params, "doc_type": item.doc_type, "name": item.name})
            new_rows.append(row)
            admitted = Admitted(row["id"], item_id, item.name, "new", "pending", tuple(row["stages"][1:]))
        decided[item_id] = admitted
        out.append(admitted)
    uow.runs.create_many(new_rows)
    return Admission(out, len(new_rows))


def _existing(uow, previous: dict | None, item_id: uuid.UUID, name: str | None,
              redelivered: bool) -> Admitted | None:
    """The decision for an item that has a run worth keeping; None: it needs a new run."""
    if previous is None or previous["status"] == "forgotten":
        return None
    run_id, status = previous["id"], previous["status"]
    if status == "failed":
        return Admitted(run_id, item_id, name, "reopen", "pending", tuple(uow.runs.reopen(run_id)))
    if status == "pending" and redelivered:
        pending = tuple(s["stage"] for s in uow.runs.stages(run_id) if s["status"] == "pending")
        return Admitted(run_id, item_id, name, "resume", "pending", pending)
    return Admitted(run_id, item_id, name, "leave", status)
