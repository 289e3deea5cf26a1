"""Link (SPEC 9): the object's entities become `mentions` edges; the model proposes
relationships between the new object and recent ones, and only valid ones are kept.

Caller entities take precedence over extracted ones, even an empty list.
"""

from __future__ import annotations

import uuid
from typing import Any

from engram.pipelines import ids
from engram.pipelines.capture.vocabulary import (
    MENTIONS,
    TypedEntity,
    canonical_predicate,
    edge_relationship,
    type_entities,
)
from engram.pipelines.facts import fact_text
from engram.prompts.capture import LinkProposals, link_prompt

RECENT_OBJECTS = 30  # candidates read from the store ...
PROMPT_CANDIDATES = 20  # ... of which the model sees this many
MIN_CONFIDENCE = 0.5  # proposals must be strictly above


def choose_entities(caller: list[dict] | None, extracted: list[dict] | None) -> list[TypedEntity]:
    if caller is not None:
        return type_entities(caller)
    return type_entities(extracted or [], strict=False)


def edge(dataset: uuid.UUID, source: uuid.UUID, target: uuid.UUID, predicate: str, names: tuple[str, str],
         properties: dict[str, Any]) -> dict:
    """An edge row; its text reads like recall renders facts ("A caused by B")."""
    relationship = edge_relationship(predicate)
    return {"id": ids.edge_id(dataset, source, target, relationship), "source_id": source, "target_id": target,
            "relationship": relationship, "edge_text": fact_text(names[0], relationship, names[1]),
            "properties": {"predicate": predicate, **properties}}


def validate(proposal, new_id: uuid.UUID, known: set[uuid.UUID]) -> tuple[tuple | None, str | None]:
    """(source, target, predicate) of an acceptable proposal, or the reason it is rejected."""
    predicate = canonical_predicate(proposal.rel_type)
    if predicate is None:
        return None, f"unknown predicate {proposal.rel_type!r}"
    if not proposal.confidence > MIN_CONFIDENCE:
        return None, f"confidence {proposal.confidence} not above {MIN_CONFIDENCE}"
    try:
        source, target = uuid.UUID(str(proposal.from_id).strip()), uuid.UUID(str(proposal.to_id).strip())
    except ValueError:
        return None, "missing endpoint"
    if source == target:
        return None, "self-link"
    if new_id not in (source, target):
        return None, "edge does not touch the new object"
    other = target if source == new_id else source
    if other not in known:
        return None, f"endpoint {other} is not a listed object"
    return (source, target, predicate), None


def link(new: dict, entities: list[TypedEntity], candidates: list[dict], gateway) -> dict:
    """Entity nodes, edges to write and rejected proposals for one object.

    new: {id, dataset_id, title, type, content}; candidates: recent objects {id, type, title},
    newest first (the object itself excluded).
    """
    dataset, new_id = new["dataset_id"], new["id"]
    nodes = [{"id": ids.entity_id(dataset, e.name), "name": e.name, "type": e.type} for e in entities]
    edges = [edge(dataset, new_id, n["id"], MENTIONS, (new["title"], n["name"]),
                  {"origin": "entity", "confidence": 1.0}) for n in nodes]
    shown = candidates[:PROMPT_CANDIDATES]
    rejected: list[dict] = []
    if shown and gateway.generates:
        answer = gateway.structured(link_prompt(new, shown), LinkProposals, subject=new["content"])
        titles = {new_id: new["title"], **{c["id"]: c["title"] for c in shown}}
        for p in answer.relationships:
            accepted, reason = validate(p, new_id, set(titles) - {new_id})
            if accepted is None:
                rejected.append({**p.model_dump(), "reason": reason})
                continue
            source, target, predicate = accepted
            edges.append(edge(dataset, source, target, predicate, (titles[source], titles[target]),
                              {"origin": "llm", "confidence": round(float(p.confidence), 4)}))
    return {"nodes": nodes, "edges": _unique(edges), "rejected": rejected, "candidates": len(shown)}


def _unique(edges: list[dict]) -> list[dict]:
    return list({e["id"]: e for e in edges}.values())
