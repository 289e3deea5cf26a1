"""distill_sessions (SPEC 6.4): gate → curator batches → writer per proposal → admission →
publication, over ports. Pure: no Celery, no SQL.

The Celery canvas (tasks/improve_distill.py) runs the same steps as a group of curator lanes
and a chord of writer lanes; `distill` below runs them in order (unit tests, the fake store).
A lesson's id comes from its normalised statement, so a retry never publishes it twice.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engram.pipelines.ids import lesson_id, statement_key
from engram.prompts.distillation import (
    ProposedLesson,
    ProposedLessonList,
    WrittenLesson,
    curator_prompt,
    writer_prompt,
)

MIN_CONFIDENCE = 0.75
BATCH_BLOCKS = 6
BATCH_CHARS = 16_000
QA_CUT = 1_200
CANDIDATE_CUT = 280
MAX_IN_FLIGHT = 5  # curator and writer calls of one distillation at a time
SIMILAR_LESSONS = 5
GLOSSARY_NAMES = 20
NODE_SET = "session_learnings"
REASONS = ("already_known", "not_durable", "unsupported")

# Outcomes (the stage's reason); only distillation_calls_failed leaves the watermark.
NO_GATED = "no_gated_entries"
NO_PROPOSED = "no_proposed_lessons"
NO_ACCEPTED = "no_accepted_lessons"
COMPLETED = "completed"
CALLS_FAILED = "distillation_calls_failed"
LLM_REQUIRED = "llm_required"

_WS = re.compile(r"\s+")


def squash(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def cut(text: str | None, limit: int) -> str:
    text = squash(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def node_sets(session_id: str) -> list[str]:
    return [NODE_SET, f"{NODE_SET}:{session_id}"]


# ------------------------------------------------------------------ gate


def usable(entry: Mapping) -> bool:
    """No harmful verdict and confidence at least MIN_CONFIDENCE."""
    return int(entry.get("harmful_count") or 0) == 0 and float(entry.get("confidence") or 0.0) >= MIN_CONFIDENCE


def gate(entries: Iterable[Mapping], watermark: int) -> list[Mapping]:
    """Usable entries above the watermark, chronological."""
    return sorted((e for e in entries if e["seq"] > watermark and usable(e)), key=lambda e: e["seq"])


# ------------------------------------------------------------------ curator


def block(entry: Mapping) -> str:
    """One QA block with its candidate line (the entry the curator may cite)."""
    eid = str(entry["id"])
    lines = [f"User: {cut(entry.get('question'), QA_CUT)}"]
    if squash(entry.get("answer")):
        lines.append(f"Assistant: {cut(entry.get('answer'), QA_CUT)}")
    feedback = f"helpful {int(entry.get('helpful_count') or 0)}, confidence {float(entry.get('confidence') or 0):.2f}"
    summary = squash(entry.get("question")) + (" → " + squash(entry.get("answer")) if squash(entry.get("answer")) else "")
    lines.append(f"Candidate [{eid}] ({feedback}): {cut(summary, CANDIDATE_CUT)}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Batch:
    index: int
    entry_ids: tuple[str, ...]
    timeline: str


def batches(entries: Sequence[Mapping], max_blocks: int = BATCH_BLOCKS, budget: int = BATCH_CHARS) -> list[Batch]:
    """Chronological blocks, at most `max_blocks` per batch and `budget` characters."""
    out: list[Batch] = []
    ids: list[str] = []
    parts: list[str] = []
    size = 0

    def close():
        if parts:
            out.append(Batch(len(out), tuple(ids), "\n\n".join(parts)))

    for entry in sorted(entries, key=lambda e: e["seq"]):
        text = block(entry)
        extra = len(text) + (2 if parts else 0)
        if parts and (len(parts) >= max_blocks or size + extra > budget):
            close()
            ids, parts, size, extra = [], [], 0, len(text)
        ids.append(str(entry["id"]))
        parts.append(text)
        size += extra
    close()
    return out


def clean_proposals(batch: Batch, answer: ProposedLessonList) -> list[ProposedLesson]:
    """Member ids limited to the batch's entries; blank statements dropped."""
    known = set(batch.entry_ids)
    out = []
    for p in answer.lessons:
        if squash(p.working_statement):
            members = [m for m in dict.fromkeys(p.member_entry_ids) if m in known]
            out.append(ProposedLesson(working_statement=squash(p.working_statement), member_entry_ids=members))
    return out


def merge_proposals(per_batch: Iterable[Sequence[ProposedLesson]]) -> list[ProposedLesson]:
    """One proposal per normalised working statement, members united, first-seen order."""
    merged: dict[str, ProposedLesson] = {}
    for proposals in per_batch:
        for p in proposals:
            key = statement_key(p.working_statement)
            if key in merged:
                members = list(dict.fromkeys([*merged[key].member_entry_ids, *p.member_entry_ids]))
                merged[key] = ProposedLesson(working_statement=merged[key].working_statement, member_entry_ids=members)
            else:
                merged[key] = p
    return list(merged.values())


# ------------------------------------------------------------------ writer


def render_member(entry: Mapping) -> str:
    text = f"[{entry['id']}] User: {cut(entry.get('question'), QA_CUT)}"
    if squash(entry.get("answer")):
        text += f" | Assistant: {cut(entry.get('answer'), QA_CUT)}"
    return text


def writer_messages(proposal: ProposedLesson, entries_by_id: Mapping[str, Mapping], similar: Sequence[str],
                    glossary: Sequence[str]) -> list[dict]:
    members = [render_member(entries_by_id[m]) for m in proposal.member_entry_ids if m in entries_by_id]
    return writer_prompt(proposal.working_statement, members, list(similar)[:SIMILAR_LESSONS],
                         list(dict.fromkeys(glossary))[:GLOSSARY_NAMES])


@dataclass
class Decision:
    proposal: ProposedLesson
    written: WrittenLesson | None = None
    error: str | None = None  # the call failed

    @property
    def failed(self) -> bool:
        return self.written is None

    @property
    def accepted(self) -> bool:
        """Admission: not failed, accept = true, a non-blank statement."""
        return self.written is not None and self.written.accept and bool(squash(self.written.statement))

    @property
    def reason(self) -> str | None:
        if self.failed:
            return "call_failed"
        if self.accepted:
            return None
        reason = self.written.reason
        return reason if reason in REASONS else ("unsupported" if self.written.accept else "not_durable")

    def as_dict(self) -> dict:
        return {"proposal": self.proposal.model_dump(), "error": self.error,
                "written": self.written.model_dump() if self.written is not None else None}

    @classmethod
    def from_dict(cls, data: Mapping) -> Decision:
        written = data.get("written")
        return cls(ProposedLesson.model_validate(data["proposal"]),
                   WrittenLesson.model_validate(written) if written is not None else None, data.get("error"))


# ------------------------------------------------------------------ publication


def render_lesson(session_id: str, statement: str, why_learned: str) -> str:
    statement = squash(statement)
    why = squash(why_learned).rstrip(".")
    body = f"{statement} ({why}.)" if why else statement
    return f"# Session learning (session {session_id})\n\n{body}\n"


@dataclass
class Publication:
    lesson_id: uuid.UUID
    session_id: str
    statement: str
    why_learned: str
    entities: list[str]
    member_entry_ids: list[str]
    text: str

    @property
    def name(self) -> str:
        return f"session-learning-{self.lesson_id}.md"

    @property
    def source(self) -> str:
        return f"session:{self.session_id}#lesson:{self.lesson_id}"


def publications(dataset_id: uuid.UUID, session_id: str, decisions: Iterable[Decision]) -> list[Publication]:
    """The admitted lessons, one per lesson id (the first decision wins)."""
    out: dict[uuid.UUID, Publication] = {}
    for d in decisions:
        if not d.accepted:
            continue
        w = d.written
        lid = lesson_id(dataset_id, w.statement)
        if lid not in out:
            out[lid] = Publication(lid, session_id, squash(w.statement), squash(w.why_learned),
                                   [squash(e) for e in w.entities if squash(e)], list(d.proposal.member_entry_ids),
                                   render_lesson(session_id, w.statement, w.why_learned))
    return list(out.values())


def outcome(proposals: int, decisions: Sequence[Decision], curator_failures: int) -> str:
    if curator_failures or any(d.failed for d in decisions):
        return CALLS_FAILED
    if not proposals:
        return NO_PROPOSED
    if not any(d.accepted for d in decisions):
        return NO_ACCEPTED
    return COMPLETED


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


def summary(gated: int, proposals: int, decisions: Sequence[Decision], curator_failures: int,
            published: int) -> dict:
    rejected: dict[str, int] = {}
    for d in decisions:
        if not d.accepted and not d.failed:
            rejected[d.reason] = rejected.get(d.reason, 0) + 1
    return {"gated": gated, "proposals": proposals, "accepted": sum(d.accepted for d in decisions),
            "published": published, "rejected": rejected, "curator_failures": curator_failures,
            "writer_failures": sum(d.failed for d in decisions)}


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
