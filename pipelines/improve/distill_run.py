"""How distillation runs (pipelines/improve/distill.py holds its steps): the lanes the Celery
canvas (tasks/improve_distill.py) is made of, and `distill`, which runs the same lanes in
order over ports (unit tests, the fake store). Pure: no Celery, no SQL.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engram.pipelines.improve.distill import (
    CALLS_FAILED,
    COMPLETED,
    GLOSSARY_NAMES,
    MAX_IN_FLIGHT,
    NO_ACCEPTED,
    NO_GATED,
    NO_PROPOSED,
    SIMILAR_LESSONS,
    Batch,
    Decision,
    Publication,
    batches,
    clean_proposals,
    gate,
    merge_proposals,
    outcome,
    publications,
    summary,
    writer_messages,
)
from engram.prompts.distillation import ProposedLesson, ProposedLessonList, WrittenLesson, curator_prompt


# ------------------------------------------------------------------ in order, over ports


class DistillPorts:
    """What distillation needs from the world (duck-typed; the fake store implements it)."""

    def similar_lessons(self, dataset_id: uuid.UUID, text: str, limit: int) -> list[str]: ...
    def glossary(self, dataset_id: uuid.UUID, text: str, limit: int) -> list[str]: ...
    def publish(self, dataset_id: uuid.UUID, publications: list[Publication], decisions: list[Decision],
                session_id: str) -> int: ...
    def advance(self, dataset_id: uuid.UUID, session_id: str, seq: int) -> None: ...


@dataclass
class Result:
    outcome: str
    counts: dict = field(default_factory=dict)


def distill(ports: DistillPorts, structured: Callable, dataset_id: uuid.UUID, session_id: str,
            window: Sequence[Mapping], watermark: int, clock: Callable[[], float] = time.monotonic) -> Result:
    """One session's distillation in one lane: the semantics the Celery canvas reproduces."""
    gated = gate(window, watermark)
    if not gated:
        return Result(NO_GATED, {"gated": 0})
    sessions = {session_id: {"gated": len(gated)}}
    curated = curate_lane(plan_batches({session_id: {"entries": gated}}), structured, clock)
    proposals = merge_lanes([curated], sessions)
    by_id = {str(e["id"]): e for e in gated}

    def inputs(_item, p: ProposedLesson):
        return (by_id, ports.similar_lessons(dataset_id, p.working_statement, SIMILAR_LESSONS),
                ports.glossary(dataset_id, p.working_statement, GLOSSARY_NAMES))

    decisions = decisions_by_session([write_lane(proposals, structured, clock, inputs)], sessions)[session_id]
    published = ports.publish(dataset_id, publications(dataset_id, session_id, decisions), decisions, session_id)
    result = outcome(len(proposals), decisions, sessions[session_id]["curator_failures"])
    if result != CALLS_FAILED:
        ports.advance(dataset_id, session_id, max(e["seq"] for e in window))
    return Result(result, summary(len(gated), len(proposals), decisions, sessions[session_id]["curator_failures"],
                                  published))


# ------------------------------------------------------------------ lanes (the canvas's pieces)


def lanes(items: Sequence, n: int = MAX_IN_FLIGHT) -> list[list]:
    """Deal items round-robin to at most n lanes; a lane makes its calls one after the other."""
    return [list(items[i::n]) for i in range(min(n, len(items)))]


def plan_batches(work: Mapping[str, Mapping]) -> list[dict]:
    """Curator batches of every session (JSON-ready). work: session → {"entries": gated entries}."""
    out = []
    for sid, w in work.items():
        for b in batches(w["entries"]):
            out.append({"session_id": sid, "index": b.index, "entry_ids": list(b.entry_ids), "timeline": b.timeline})
    return out


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _timed(calls: list, clock: Callable[[], float], fn, *args):
    start = clock()
    try:
        return fn(*args)
    finally:
        calls.append([start, clock()])


def curate_lane(batch_list: Sequence[Mapping], structured: Callable, clock: Callable[[], float]) -> dict:
    """One curator lane. Never raises: a failed call is a batch with an error."""
    out, calls = [], []
    for b in batch_list:
        batch = Batch(b["index"], tuple(b["entry_ids"]), b["timeline"])
        try:
            answer = _timed(calls, clock, structured, curator_prompt(batch.timeline), ProposedLessonList)
            proposals = [p.model_dump() for p in clean_proposals(batch, answer)]
            out.append({"session_id": b["session_id"], "index": b["index"], "proposals": proposals, "error": None})
        except Exception as exc:
            out.append({"session_id": b["session_id"], "index": b["index"], "proposals": [], "error": _error(exc)})
    return {"batches": out, "calls": calls}


def merge_lanes(results: Sequence[Mapping], sessions: dict) -> list[dict]:
    """Proposals per session from the curator lanes (batch order); counts go into `sessions`."""
    found = sorted((b for lane in results for b in lane["batches"]), key=lambda b: (b["session_id"], b["index"]))
    proposals = []
    for sid in sessions:
        mine = [b for b in found if b["session_id"] == sid]
        sessions[sid]["curator_failures"] = sum(1 for b in mine if b["error"])
        merged = merge_proposals([[ProposedLesson.model_validate(p) for p in b["proposals"]] for b in mine])
        sessions[sid]["proposals"] = len(merged)
        proposals += [{"session_id": sid, "proposal": p.model_dump()} for p in merged]
    return proposals


def writer_inputs(items: Sequence[dict], embed: Callable, similar: Callable, glossary: Callable,
                  entries: Callable) -> list[dict]:
    """Each proposal with what its writer sees: member entries, ≤5 similar lessons and ≤20
    glossary names (looked up by the working statement's vector; one embedding batch)."""
    vectors = embed([i["proposal"]["working_statement"] for i in items]) if items else []
    found = {str(e["id"]): e for e in entries({m for i in items for m in i["proposal"]["member_entry_ids"]})}
    out = []
    for item, vector in zip(items, vectors):
        members = [found[m] for m in item["proposal"]["member_entry_ids"] if m in found]
        out.append(dict(item, members=[{k: (str(v) if k == "id" else v) for k, v in e.items()
                                        if k in ("id", "seq", "question", "answer")} for e in members],
                        similar=similar(vector, SIMILAR_LESSONS), glossary=glossary(vector, GLOSSARY_NAMES)))
    return out


def _given(item: Mapping, proposal: ProposedLesson):
    return {str(e["id"]): e for e in item.get("members", [])}, item.get("similar", []), item.get("glossary", [])


def write_lane(proposals: Sequence[Mapping], structured: Callable, clock: Callable[[], float],
               inputs: Callable = _given) -> dict:
    """One writer lane over proposals carrying their inputs (see writer_inputs); `inputs(item,
    proposal)` → (entries by id, similar, glossary). Never raises: a failed call is a decision
    without an answer."""
    out, calls = [], []
    for p in proposals:
        proposal = ProposedLesson.model_validate(p["proposal"])
        try:
            entries, similar, names = inputs(p, proposal)
            messages = writer_messages(proposal, entries, similar, names)
            decision = Decision(proposal, _timed(calls, clock, structured, messages, WrittenLesson))
        except Exception as exc:
            decision = Decision(proposal, None, _error(exc))
        out.append({"session_id": p["session_id"], "decision": decision.as_dict()})
    return {"decisions": out, "calls": calls}


def decisions_by_session(results: Sequence[Mapping], sessions: Mapping) -> dict[str, list[Decision]]:
    out: dict[str, list[Decision]] = {sid: [] for sid in sessions}
    for lane in results:
        for x in lane["decisions"]:
            out[x["session_id"]].append(Decision.from_dict(x["decision"]))
    return out


def max_in_flight(calls: Iterable[Sequence[float]]) -> int:
    """The most calls that overlapped in time (an end at the same instant as a start does not)."""
    events = sorted([(s, 1) for s, _ in calls] + [(e, -1) for _, e in calls], key=lambda x: (x[0], x[1]))
    now = peak = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    return peak


def overall(outcomes: Iterable[str]) -> str:
    """A run's outcome over its sessions: any failure wins, then any publication, and so on."""
    outcomes = set(outcomes)
    for o in (CALLS_FAILED, COMPLETED, NO_ACCEPTED, NO_PROPOSED):
        if o in outcomes:
            return o
    return NO_GATED
