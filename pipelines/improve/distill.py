"""distill_sessions (SPEC 6.4): gate → curator batches → writer per proposal → admission →
publication, over ports. Pure: no Celery, no SQL.

The Celery canvas (tasks/improve_distill.py) runs the same steps as a group of curator lanes
and a chord of writer lanes (pipelines/improve/distill_run.py holds the lanes and `distill`,
which runs them in order: unit tests, the fake store).
A lesson's id comes from its normalised statement, so a retry never publishes it twice.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engram.pipelines.ids import lesson_id, statement_key
from engram.prompts.distillation import (
    ProposedLesson,
    ProposedLessonList,
    WrittenLesson,
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


def summary(gated: int, proposals: int, decisions: Sequence[Decision], curator_failures: int,
            published: int) -> dict:
    rejected: dict[str, int] = {}
    for d in decisions:
        if not d.accepted and not d.failed:
            rejected[d.reason] = rejected.get(d.reason, 0) + 1
    return {"gated": gated, "proposals": proposals, "accepted": sum(d.accepted for d in decisions),
            "published": published, "rejected": rejected, "curator_failures": curator_failures,
            "writer_failures": sum(d.failed for d in decisions)}
