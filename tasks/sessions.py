"""Session memory tasks: store a turn (remember with session_id), feedback, the sessions view.

Storing never depends on improving: the entry is committed first and `session_stored` is the
answer whatever happens to the automatic improve it may request afterwards.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from engram.adapters import claims as claim_keys
from engram.adapters.redis_client import get_redis
from engram.adapters.store import Store
from engram.adapters.store.access import require_run
from engram.models.payloads import (FeedbackRecorded, FeedbackRequest, RememberRequest, SessionsReport,
                                   SessionsRequest, SessionStored)
from engram.pipelines import ids
from engram.pipelines.improve.admission import admit
from engram.pipelines.improve.debounce import is_due
from engram.pipelines.intake import writable_dataset
from engram.pipelines.relative_dates import dates_said
from engram.settings import get_settings, load_configured
from engram.tasks.base import engram_task
from engram.adapters.claims import Claims
from engram.celery_app import app

log = logging.getLogger("engram.sessions")


def store_session_entry(req: RememberRequest, task_id: str | None = None) -> dict:
    """engram.remember with a session_id: commit the entry, then maybe request an improve."""
    # A redelivered message carries the same task id: the same entry id, stored once.
    entry_id = ids.remembered_entry_id(task_id) if task_id else uuid.uuid4()
    with Store().unit_of_work() as uow:
        dataset = writable_dataset(uow, req.dataset, req.user, req.create_dataset)
        existing = uow.sessions.entry(entry_id)
        if existing is None:
            user_id = uow.access.ensure_user(req.user)
            at = req.at or datetime.now(UTC)
            uow.sessions.add_entry(
                dataset_id=dataset, session_id=req.session_id, user_id=user_id,
                question=req.question or "", answer=req.answer or "", context=req.context or "",
                source_chunk_ids=req.source_chunk_ids, source_edge_ids=req.source_edge_ids, entry_id=entry_id,
                occurred_at=at, dates=dates_said({"question": req.question, "answer": req.answer}, at),
            )
            state = uow.improve.bump_session(dataset, req.session_id, user_id)
        entry = uow.sessions.entry(entry_id)
    if existing is not None:  # redelivered: stored before, its improve request already decided
        improve, reason = "debounced", None
    else:
        improve, reason = request_automatic(dataset, req.dataset, req.user, req.session_id, state)
    return SessionStored(status="session_stored", dataset=req.dataset, session_id=req.session_id, entry_id=entry_id,
                         seq=entry["seq"], improve=improve, reason=reason).model_dump(mode="json")


def admission_callback(path: str | None) -> Callable[[dict], object] | None:
    """The host's callback from 'module:function' (or 'module.function'); unloadable = none (fail-open)."""
    if not path:
        return None
    try:
        return load_configured(path)
    except Exception:
        log.warning("admission callback %r cannot be loaded; allowing improves (fail-open)", path, exc_info=True)
        return None


def request_automatic(dataset_id: uuid.UUID, dataset: str, user: str, session_id: str, state: dict) -> tuple[str, str | None]:
    """Debounce, then host admission, then enqueue the improve. Returns (outcome, reason)."""
    s = get_settings()
    if not s.improve_automatic:
        return "disabled", None
    n, t = s.improve_debounce_entries, s.improve_debounce_seconds
    if not is_due(state["entries_since_improve"], state["last_improve_at"], state["now"], n, t):
        return "debounced", None
    reason = admit(admission_callback(s.improve_admission),
                   {"dataset": dataset, "user": user, "session_ids": [session_id], "trigger": "auto"})
    with Store().unit_of_work() as uow:
        if reason is not None:
            uow.improve.record_decline(dataset_id, session_id, reason)
            return "declined", reason
        # Re-checked under the row lock: of concurrent remembers, one takes the request.
        locked = uow.improve.lock_session(dataset_id, session_id)
        if not is_due(locked["entries_since_improve"], locked["last_improve_at"], locked["now"], n, t):
            return "debounced", None
        uow.improve.mark_improving(dataset_id, [session_id], auto=True)
    app.send_task("engram.improve.start", kwargs={
        "dataset_id": str(dataset_id), "session_ids": [session_id], "trigger": "auto"})
    return "requested", None


@engram_task("engram.feedback", payload=FeedbackRequest)
def feedback(self, req: FeedbackRequest) -> dict:
    """Count a helpful/harmful verdict on an entry; feedback_weights folds it in at the next improve."""
    with Store().unit_of_work() as uow:
        entry = uow.sessions.entry(req.entry_id, lock=True)
        require_run(uow, entry, req.entry_id, req.user, "write", what="session entry")
        row = uow.sessions.record_feedback(req.entry_id, req.feedback == "helpful", req.score)
    return FeedbackRecorded(entry_id=req.entry_id, session_id=row["session_id"], helpful_count=row["helpful_count"],
                            harmful_count=row["harmful_count"], confidence=row["confidence"]).model_dump(mode="json")


@engram_task("engram.sessions", payload=SessionsRequest)
def sessions(self, req: SessionsRequest) -> dict:
    """Per session: entries, pending work, last improve, rerun request, claim holders, recent runs."""
    holders = Claims(get_redis()).holders()
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        rows = uow.improve.sessions(dataset, [req.session_id] if req.session_id else None)
        out = []
        for r in rows:
            runs = uow.improve.runs_of(dataset, r["session_id"], limit=req.runs) if req.runs else []
            out.append({
                "session_id": r["session_id"], "entries": r["entries"], "pending_entries": r["pending_entries"],
                "pending_feedback": r["pending_feedback"], "watermark_seq": r["watermark_seq"],
                "max_seq": r["max_seq"], "entries_since_improve": r["entries_since_improve"],
                "last_improve_at": _iso(r["last_improve_at"]), "auto_requests": r["auto_requests"],
                "rerun_requested": r["rerun_requested_at"] is not None, "declined_reason": r["declined_reason"],
                "session_claim": holders.get(claim_keys.session_key(dataset, r["session_id"])),
                "runs": [run_summary(uow, run) for run in runs],
                **_learning(uow, dataset, r["session_id"]),
            })
    return SessionsReport(dataset=req.dataset, dataset_id=dataset, dataset_claim=holders.get(claim_keys.dataset_key(dataset)),
                          sessions=out).model_dump(mode="json")


def _learning(uow, dataset, session_id: str) -> dict:
    """What distillation made of the session: its watermark, published lessons and every
    writer decision (rejected ones with their reason)."""
    marks = uow.learning.distill_watermarks(dataset, [session_id])
    lessons = uow.learning.lessons_of(dataset, session_id)
    decisions = uow.learning.decisions_of(dataset, session_id)
    return {
        "distill_watermark_seq": marks[session_id],
        "lessons": [{"lesson_id": str(x["id"]), "statement": x["statement"], "why_learned": x["why_learned"],
                     "entry_ids": list(x["member_entry_ids"]), "data_item_id": str(x["data_item_id"])
                     if x["data_item_id"] else None, "created_at": _iso(x["created_at"])} for x in lessons],
        "decisions": [{"working_statement": x["working_statement"], "accepted": x["accepted"], "reason": x["reason"],
                       "statement": x["statement"], "entry_ids": list(x["member_entry_ids"]), "error": x["error"],
                       "lesson_id": str(x["lesson_id"]) if x["lesson_id"] else None,
                       "run_id": str(x["improve_run_id"]) if x["improve_run_id"] else None,
                       "created_at": _iso(x["created_at"])} for x in decisions],
    }


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def run_summary(uow, run: dict) -> dict:
    """An improve run as the sessions view and engram.improve.run_status show it (a stage's counts: its output)."""
    return {"run_id": str(run["id"]), "claim_id": str(run["claim_id"]) if run["claim_id"] else None,
            "pass": run["pass"], "trigger": run["trigger"], "status": run["status"], "fence": run["fence"],
            "llm_calls": run["llm_calls"], "tokens": run["tokens"], "created_at": _iso(run["created_at"]),
            "finished_at": _iso(run["finished_at"]),
            "stages": [{"stage": s["stage"], "status": s["status"], "reason": s["reason"], "error": s["error"],
                        "counts": s["output"] or {}, "llm_calls": s["llm_calls"]} for s in uow.runs.stages(run["id"])]}
