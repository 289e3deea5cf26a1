"""What a fact is and how one reads. Pure.

A fact is an edge between two things that states something: every relationship except the
structural ones (`contains` joins a chunk to an entity it mentions; `contradicts` annotates two
facts and is returned as a conflict on them). Extraction, capture, the contradiction check,
supersession, improve and recall (its SQL too) all decide with NOT_FACTS, and all write a fact
as "source relationship target" with fact_text. A `contains` edge keeps the chunk's description
of the entity in properties.description, as a fact keeps its own: forget reads those fields,
never the text back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONTAINS = "contains"
CONTRADICTS = "contradicts"
NOT_FACTS: frozenset[str] = frozenset({CONTAINS, CONTRADICTS})


def is_fact(relationship: str) -> bool:
    """relationship: a stored (normalised) relationship name."""
    return relationship not in NOT_FACTS


def fact_text(source: Any, relationship: str, target: Any, description: str | None = None) -> str:
    """"Alice Moreau ceo of Acme" (with ": {description}" when one is given): the one rendering."""
    text = f"{source} {relationship.replace('_', ' ')} {target}"
    return f"{text}: {description}" if description else text


def without_description(text: str, description: str | None) -> str:
    """A fact's text (fact_text) once its description is dropped, from the edge's own fields."""
    suffix = f": {description}"
    return text[: -len(suffix)] if description and text.endswith(suffix) else text


def mention_text(name: str, description: str | None = None) -> str:
    """A `contains` edge's text: the chunk mentions the entity (with how the chunk describes it)."""
    text = f"Document chunk mentions {name}"
    return f"{text}: {description}" if description else text


def about_text(name: str) -> str:
    """A `contains` edge's text from each chunk to a document's main entity."""
    return f"Document chunk is about {name}"


def row_fact_text(row: Mapping[str, Any]) -> str:
    """fact_text of a row carrying source_name, relationship and target_name (recall's reads)."""
    return fact_text(row["source_name"], row["relationship"], row["target_name"])

