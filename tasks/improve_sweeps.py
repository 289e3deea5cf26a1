"""Beat sweeps of the improve machinery: quiet sessions, leftover rerun requests, dead claims.

The reference has no timer (a quiet session can wait forever) and its rerun requests can
be left behind; these sweeps make every pending entry and every request end in a run.
"""

from __future__ import annotations

import logging
import uuid

from engram.adapters.store import Store
from engram.pipelines.improve.admission import admit
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.tasks.improve import claiming, kick_reruns
from engram.tasks.sessions import admission_callback
from engram.celery_app import app
from engram.pipelines.improve.flow import BUILD_TRUTH_SUBSPACE, enabled

log = logging.getLogger("engram.improve.sweeps")

@engram_task("engram.improve.sweep_quiet_sessions")
def sweep_quiet_sessions(self) -> dict:
    """Start improves for sessions whose pending entries (or feedback) are older than T.

    Automatic: the host admission callback is asked per session, as on the remember path,
    so one declined session never holds back the others of its dataset.
    """
    s = get_settings()
    with Store().unit_of_work() as uow:
        quiet = uow.improve.quiet_sessions(s.improve_debounce_seconds)
        names = {d: uow.access.dataset_name(d) for d in {q["dataset_id"] for q in quiet}}
        users = uow.improve.user_names({q["user_id"] for q in quiet if q.get("user_id")})
    admitted: dict[uuid.UUID, list[str]] = {}
    started, declined = [], []
    callback = admission_callback(s.improve_admission)
    for q in quiet:
        dataset, sid = q["dataset_id"], q["session_id"]
        reason = admit(callback, {"dataset": names[dataset], "user": users.get(q.get("user_id")),
                                  "session_ids": [sid], "trigger": "beat"})
        if reason is not None:
            with Store().unit_of_work() as uow:
                uow.improve.record_decline(dataset, sid, reason)
            declined.append({"dataset_id": str(dataset), "session_ids": [sid], "reason": reason})
            continue
        admitted.setdefault(dataset, []).append(sid)
    for dataset, sessions in admitted.items():
        app.send_task("engram.improve.start", kwargs={
            "dataset_id": str(dataset), "session_ids": sessions, "trigger": "beat"})
        started.append({"dataset_id": str(dataset), "session_ids": sessions})
    return {"started": started, "declined": declined}


@engram_task("engram.improve.sweep_reruns")
def sweep_reruns(self) -> dict:
    """Every leftover rerun request becomes a run (one start per dataset)."""
    return {"datasets": kick_reruns()}


@engram_task("engram.improve.sweep_claims")
def sweep_claims(self) -> dict:
    """Held claims whose lease ran out unrenewed: abandoned, their runs lost, a rerun requested
    (pipelines/improve/claiming.py expire_claims), then the rerun requests started."""
    use = claiming()
    swept = [str(c) for c in use.expire_claims()]
    if swept:
        log.warning("improve sweep: %d abandoned claims", len(swept))
        kick_reruns(use=use)
    return {"abandoned": swept}


@engram_task("engram.improve.sweep_truth")
def sweep_truth(self) -> dict:
    """Per dataset whose lessons changed (or with chunks the live basis has not stamped), an
    improve run of the dataset alone: build_truth_subspace runs under the dataset's claim.
    Debounced by the data: nothing changed → nothing started. Off unless the stage is opted in."""
    s = get_settings()
    if not enabled(BUILD_TRUTH_SUBSPACE, s):
        return {"started": [], "reason": f"{BUILD_TRUTH_SUBSPACE.name} is not enabled"}
    with Store().unit_of_work() as uow:
        due = uow.learning.truth_due()
    for dataset in due:
        app.send_task("engram.improve.start", kwargs={"dataset_id": str(dataset), "session_ids": [], "trigger": "beat"})
    return {"started": [str(d) for d in due]}
