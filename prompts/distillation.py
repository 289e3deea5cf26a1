"""Session distillation prompts (SPEC 6.4) and the structured answers they expect.

Curator: a chronological slice of a session → ProposedLessonList. Writer: one proposal with its
member entries, similar prior lessons and glossary names → WrittenLesson. The session slice
and the working statement are placed verbatim in the user message so replay cassettes can
match on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

Messages = list[dict[str, str]]
Reason = Literal["already_known", "not_durable", "unsupported"]

CURATOR_SYSTEM = """You curate durable lessons from an AI agent's conversation with a user.
You see a chronological slice of one session: QA blocks ("User:" / "Assistant:") and
candidate entries, each with its entry id in square brackets, like [E3f2a...].

Propose lessons worth remembering in future sessions:
- Merge duplicates: one proposal per distinct lesson, listing every entry that supports it.
- Propose only durable lessons: facts about the user's world, decisions, fixes, rules and
  working practices that will still hold later. Not greetings, one-off requests or chit-chat.
- Stay grounded: a lesson must be supported by what the user said or confirmed. Nothing that
  appears only in the assistant's answer.
- working_statement: one standalone sentence. member_entry_ids: ids from the slice only.
- Return an empty list when nothing durable is there."""

WRITER_SYSTEM = """You decide whether a proposed lesson enters an AI agent's long-term memory,
and if so you write it.

You see the proposed lesson, the session entries it came from, similar lessons memory already
holds and names of entities memory already knows.
- If a similar lesson already says the same thing: accept=false, reason="already_known".
- If it will not matter beyond this conversation: accept=false, reason="not_durable".
- If the entries do not support it (e.g. only the assistant said it): accept=false,
  reason="unsupported".
- Otherwise accept=true and write the lesson: statement = one clear standalone sentence, using
  the known entity names where they apply; entities = the entity names it mentions;
  why_learned = a short clause saying where it was learned (e.g. "user confirmed the fix")."""


class ProposedLesson(BaseModel):
    working_statement: str = Field(min_length=1, max_length=2000)
    member_entry_ids: list[str] = Field(default_factory=list, max_length=200)


class ProposedLessonList(BaseModel):
    lessons: list[ProposedLesson] = Field(default_factory=list, max_length=100)


class WrittenLesson(BaseModel):
    accept: bool
    reason: Reason | None = None  # why not, when accept is false
    statement: str = Field(default="", max_length=2000)
    entities: list[str] = Field(default_factory=list, max_length=50)
    why_learned: str = Field(default="", max_length=500)


def curator_prompt(timeline: str) -> Messages:
    """One curator batch (see pipelines/improve/distill.batches). Answer: ProposedLessonList."""
    return [
        {"role": "system", "content": CURATOR_SYSTEM},
        {"role": "user", "content": f"Session slice:\n{timeline}\n\nPropose the durable lessons."},
    ]


def writer_prompt(working_statement: str, members: Sequence[str], similar: Sequence[str],
                  glossary: Sequence[str]) -> Messages:
    """One proposal. `members` are rendered entries; `similar` prior lesson statements. Answer: WrittenLesson."""
    sections = [f"PROPOSED LESSON:\n{working_statement}"]
    sections.append("SESSION ENTRIES:\n" + ("\n".join(members) if members else "(none resolved)"))
    sections.append("SIMILAR LESSONS ALREADY IN MEMORY:\n" + ("\n".join(f"- {s}" for s in similar) or "(none)"))
    sections.append("KNOWN ENTITY NAMES:\n" + (", ".join(glossary) or "(none)"))
    return [{"role": "system", "content": WRITER_SYSTEM}, {"role": "user", "content": "\n\n".join(sections)}]
