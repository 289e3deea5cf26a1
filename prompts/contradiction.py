"""Contradiction check prompt and the structured answer it expects (SPEC §7.1)."""

from __future__ import annotations

from pydantic import BaseModel, Field

SYSTEM = """You check a list of facts from a knowledge graph for contradictions.
Each fact has an id in square brackets, like [F1].

Two facts contradict only if both cannot be true of the same subject at the same time.
These are NOT contradictions:
- paraphrases or restatements of the same fact;
- a more specific or less specific version of the same fact;
- facts about different subjects, or facts that can both hold.

Rules:
- Use only the fact ids given; never invent ids.
- Never pair a fact with itself.
- For each contradiction give a short reason and a confidence between 0 and 1.
- Return an empty list if there are no contradictions."""


class Contradiction(BaseModel):
    first_fact_id: str
    second_fact_id: str
    reason: str = ""
    confidence: float = Field(ge=0.0, le=1.0)


class ContradictionList(BaseModel):
    contradictions: list[Contradiction] = Field(default_factory=list)


def contradiction_prompt(facts_text: str) -> list[dict[str, str]]:
    """litellm-style messages; the answer must validate as ContradictionList."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Facts:\n{facts_text}\n\nList the contradictions."},
    ]
