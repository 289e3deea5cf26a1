"""Capture lane prompts (SPEC 9): classify a knowledge object; propose links to recent ones.

Each function returns litellm messages; the answer must validate as the model next to it.
Titles and bodies are placed verbatim so replay cassettes can match on them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engram.pipelines.capture.vocabulary import ENTITY_TYPES, OBJECT_TYPES, PREDICATES

Messages = list[dict[str, str]]

CLASSIFY_BODY_CHARS = 8000  # of the body the classifier sees
LINK_BODY_CHARS = 4000  # of the new object's body the linker sees

_CLASSIFY = f"""You classify knowledge objects for an agent's memory.
- type: one of {", ".join(OBJECT_TYPES)}.
- summary: one or two sentences.
- tags: a few short lower-case tags.
- project: the project's name if the text makes it clear, else "".
- entities: SPECIFIC named things only: technologies (Redis, PostgreSQL), named projects,
  recognised patterns (circuit-breaker, saga) or domain concepts (authentication, caching);
  each with a type among {", ".join(ENTITY_TYPES)}. Never generic words such as fix, bug,
  error, test, code, change, update, server, command.
- confidence: 0..1, how sure you are of the type.
- properties: type-specific fields as short strings (decision: chosen, rationale,
  alternatives; fix: symptom, rootCause, resolution; lesson: cause, impact, prevention;
  session: goal, worked, failed, nextSteps; research: question, findings, sources)."""


class CaptureClassification(BaseModel):
    type: str = "idea"
    summary: str = ""
    tags: list[str] | str = Field(default_factory=list)
    project: str = ""
    entities: list[Any] = Field(default_factory=list)  # typed and filtered by the pipeline
    confidence: float = 0.5
    properties: dict[str, Any] = Field(default_factory=dict)


def classify_prompt(title: str, body: str) -> Messages:
    return [
        {"role": "system", "content": _CLASSIFY},
        {"role": "user", "content": f"Title: {title}\nContent:\n{body[:CLASSIFY_BODY_CHARS]}"},
    ]


_LINK = f"""You find relationships between a new knowledge object and existing ones.
Allowed relationships: {", ".join(PREDICATES)}.
Each relationship joins the NEW object and ONE existing object (either direction), using
only the ids listed. Give a confidence 0..1; propose only relationships you are sure of.
Return an empty list if there are none."""


class LinkProposal(BaseModel):
    from_id: str
    to_id: str
    rel_type: str
    confidence: float = 0.0


class LinkProposals(BaseModel):
    relationships: list[LinkProposal] = Field(default_factory=list)


def link_prompt(new: dict, candidates: list[dict]) -> Messages:
    listed = "\n".join(f"- ID: {c['id']}, Type: {c['type']}, Title: {c['title']}" for c in candidates)
    return [
        {"role": "system", "content": _LINK},
        {"role": "user", "content": (
            f"New object:\nID: {new['id']}\nTitle: {new['title']}\nType: {new['type']}\n"
            f"Content: {new['content'][:LINK_BODY_CHARS]}\n\nExisting objects:\n{listed}")},
    ]
