"""Normalize (SPEC 9): summary, classification, entities of one captured object.

A supplied summary skips the model (confidence 0.9); otherwise the model classifies from
the title and the first 8,000 body characters; with no model: type idea, summary = title,
confidence 0. A type the caller or template chose is never replaced by classification.
"""

from __future__ import annotations

from typing import Any

from engram.pipelines.capture.vocabulary import DEFAULT_OBJECT_TYPE, OBJECT_TYPES, type_entities
from engram.prompts.capture import CaptureClassification, classify_prompt

SUPPLIED_SUMMARY_CONFIDENCE = 0.9
INVALID_TYPE_CONFIDENCE = 0.3


def classify(title: str, body: str, gateway) -> dict:
    """The classification of one object: offline fallback when no model generates."""
    if not gateway.generates:
        return {"type": DEFAULT_OBJECT_TYPE, "summary": title, "confidence": 0.0, "tags": [], "project": "",
                "entities": [], "properties": {}, "llm": False}
    answer = gateway.structured(classify_prompt(title, body), CaptureClassification, subject=body)
    confidence = max(0.0, min(1.0, float(answer.confidence)))
    kind = answer.type.strip().lower()
    if kind not in OBJECT_TYPES:
        kind, confidence = DEFAULT_OBJECT_TYPE, min(confidence, INVALID_TYPE_CONFIDENCE)
    tags = answer.tags.split(",") if isinstance(answer.tags, str) else answer.tags
    return {
        "type": kind,
        "summary": answer.summary.strip() or title,
        "confidence": confidence,
        "tags": [t.strip().lower() for t in tags if isinstance(t, str) and t.strip()],
        "project": answer.project.strip(),
        "entities": [{"name": e.name, "type": e.type} for e in type_entities(answer.entities, strict=False)],
        "properties": {k: v for k, v in answer.properties.items() if isinstance(v, (str, int, float, bool))},
        "llm": True,
    }


def normalize(obj: dict[str, Any], request: dict[str, Any], gateway) -> dict:
    """What normalize writes on the object, and the entities it hands to link."""
    if request.get("summary"):
        found = {"type": obj["type"], "summary": request["summary"], "confidence": SUPPLIED_SUMMARY_CONFIDENCE,
                 "tags": [], "project": "", "entities": [], "properties": {}, "llm": False}
    else:
        found = classify(obj["title"], obj["content"], gateway)
    kept_type = obj["type"] if request.get("type_given") else found["type"]
    # The model only fills what the caller left empty; caller and template values win.
    properties = {**found["properties"], **(obj.get("properties") or {})}
    return {
        "type": kept_type,
        "classified_type": found["type"],
        "summary": found["summary"],
        "confidence": found["confidence"],
        "tags": list(obj.get("tags") or []) or found["tags"],
        "project": obj.get("project") or found["project"],
        "properties": properties,
        "entities": found["entities"],
        "llm": found["llm"],
    }
