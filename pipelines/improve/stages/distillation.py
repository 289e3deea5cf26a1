"""distill_sessions as an improve stage (SPEC 6.4), over the store port.

gate → load (each session's usable entries above its distillation watermark) → compute returns
a Deferred: the stage goes on as a Celery canvas (tasks/improve_distill.py) whose lanes call
the pure pieces of pipelines/improve/distill.py and distill_run.py and whose last step ends the
stage through the runner (tasks/engine.py end_deferred): `conclude`, then `persist` below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engram.models.payloads import RememberItem
from engram.pipelines import ids
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.pipelines.flow import Deferred, Verdict
from engram.pipelines.improve import distill as d
from engram.pipelines.improve import distill_run as dr


def _jsonable(entry: Mapping) -> dict:
    keep = ("id", "seq", "question", "answer", "harmful_count", "helpful_count", "confidence")
    return {k: (str(entry[k]) if k == "id" else entry[k]) for k in keep}


def load(uow, ctx) -> dict:
    """Per session: its usable entries above the distillation watermark and the window's top seq."""
    marks = uow.learning.distill_watermarks(ctx.dataset_id, ctx.session_ids)
    out = {}
    for sid in ctx.session_ids:
        upto = (ctx.snapshot.get("sessions", {}).get(sid, {}).get("upto")
                or uow.sessions.max_seq(ctx.dataset_id, sid))
        window = uow.sessions.window(ctx.dataset_id, sid, marks[sid], upto)
        gated = d.gate(window, marks[sid])
        if gated:
            out[sid] = {"from": marks[sid], "upto": max(e["seq"] for e in window),
                        "entries": [_jsonable(e) for e in gated]}
    return out


def gate(uow, ctx):
    if not ctx.ports.llm().generates:
        return ("skipped", d.LLM_REQUIRED)
    return None if load(uow, ctx) else ("skipped", d.NO_GATED)


def compute(work: dict, ctx) -> Deferred:
    sessions = {sid: {"from": w["from"], "upto": w["upto"], "gated": len(w["entries"])} for sid, w in work.items()}
    return Deferred("engram.improve.distill.curate_all", {
        "run_id": str(ctx.run_id), "batches": dr.plan_batches(work), "sessions": sessions})


# ------------------------------------------------------------------ the canvas's end


def conclude(ctx, results: list[dict], sessions: dict, counts: dict, embed: Callable[[list[str]], list]) -> dict:
    """The lanes' decisions made ready to write (tasks/engine.py end_deferred calls this, then
    persist): each session's publications and a vector for every lesson not stored yet (a read
    and one embedding call, outside the write)."""
    by_session = dr.decisions_by_session(results, sessions)
    plans = {sid: d.publications(ctx.dataset_id, sid, decisions) for sid, decisions in by_session.items()}
    with ctx.ports.read() as uow:
        known = uow.learning.existing_lessons([p.lesson_id for ps in plans.values() for p in ps])
    fresh = {p.lesson_id: p for ps in plans.values() for p in ps if p.lesson_id not in known}
    vectors = dict(zip(fresh, embed([p.statement for p in fresh.values()]))) if fresh else {}
    return {"sessions": sessions, "by_session": by_session, "plans": plans, "known": set(known),
            "vectors": vectors, "counts": counts}


def persist(uow, ctx, _inputs, concluded: dict) -> Verdict:
    """Record every decision, add each admitted lesson once (its id is its statement's), advance
    a session's distillation watermark only when all its calls succeeded; the lessons' cognify
    runs start after commit. The stage fails when a session's calls failed (its writes stand)."""
    per_session, to_start = _publish(uow, ctx, concluded)
    ctx.after_commit(lambda: ctx.ports.start_cognify(to_start))
    return verdict(concluded["counts"], per_session)


def _publish(uow, ctx, c: dict) -> tuple[dict, list]:
    known, counts, to_start = c["known"], {}, []
    for sid, decisions in c["by_session"].items():
        s, published = c["sessions"][sid], 0
        for p in c["plans"][sid]:
            if p.lesson_id in c["vectors"] and p.lesson_id not in known:
                started = add_lesson_document(uow, ctx, p, c["vectors"][p.lesson_id])
                known.add(p.lesson_id)
                if started is not None:
                    published += 1
                    to_start.append(started)
        uow.learning.record_decisions([decision_row(ctx, sid, x) for x in decisions])
        outcome = d.outcome(s["proposals"], decisions, s["curator_failures"])
        if outcome != d.CALLS_FAILED:
            uow.learning.advance_distill_watermark(ctx.dataset_id, sid, s["upto"])
        counts[sid] = {"outcome": outcome, **d.summary(s["gated"], s["proposals"], decisions,
                                                       s["curator_failures"], published)}
    return counts, to_start


def verdict(counts: dict, per_session: dict) -> Verdict:
    """The stage's end from its sessions' outcomes: failed when any session's calls failed."""
    outcome = dr.overall(c["outcome"] for c in per_session.values())
    totals = {k: sum(c[k] for c in per_session.values()) for k in ("gated", "proposals", "accepted", "published")}
    counts = dict(counts, outcome=outcome, sessions=per_session, **totals)
    if outcome == d.CALLS_FAILED:
        error = "; ".join(f"session {sid}: {c['curator_failures']} curator and {c['writer_failures']} writer calls"
                          " failed, its watermark kept"
                          for sid, c in per_session.items() if c["outcome"] == d.CALLS_FAILED)
        return Verdict(counts, "failed", d.CALLS_FAILED, f"{d.CALLS_FAILED}: {error}")
    return Verdict(counts, reason=None if outcome == d.COMPLETED else outcome)


def add_lesson_document(uow, ctx, p: d.Publication, vector):
    """The lesson's document (node sets session_learnings[:session]) and its cognify run."""
    try:
        item = prepare(RememberItem(text=p.text, name=p.name), ctx.settings.max_content_bytes, 0)
    except BadInput:
        return None
    started = ctx.ports.add_document(uow, item, source=p.source, node_sets=d.node_sets(p.session_id))
    uow.learning.add_lesson(lesson_id=p.lesson_id, dataset_id=ctx.dataset_id, session_id=p.session_id,
                            statement=p.statement, why_learned=p.why_learned, entities=p.entities,
                            member_entry_ids=p.member_entry_ids, data_item_id=started[0], run_id=ctx.run_id,
                            vector=vector)
    return started[1:]


def decision_row(ctx, session_id: str, x: d.Decision) -> dict:
    w = x.written
    return {"id": ids.lesson_decision_id(ctx.run_id, session_id, x.proposal.working_statement),
            "dataset_id": ctx.dataset_id, "session_id": session_id,
            "improve_run_id": ctx.run_id, "working_statement": x.proposal.working_statement,
            "member_entry_ids": list(x.proposal.member_entry_ids), "accepted": x.accepted, "reason": x.reason,
            "statement": d.squash(w.statement) if w else "", "why_learned": d.squash(w.why_learned) if w else "",
            "lesson_id": d.lesson_id(ctx.dataset_id, w.statement) if x.accepted else None, "error": x.error}
