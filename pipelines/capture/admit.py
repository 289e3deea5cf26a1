"""Admission, pure half: a capture request becomes the object to store and the request to
keep (so reprocess restores the caller's original inputs)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from engram.pipelines.capture.vocabulary import (
    DEFAULT_OBJECT_TYPE,
    OBJECT_TYPES,
    CaptureInputError,
    get_template,
    type_entities,
)


@dataclass
class ObjectDraft:
    title: str
    content: str
    type: str
    type_given: bool  # the caller (or template) chose the type: classification never replaces it
    project: str
    tags: list[str]
    properties: dict[str, Any]
    summary: str | None = None
    entities: list[dict] | None = None  # caller entities; None = let normalize extract them
    template: str | None = None
    template_fields: dict[str, str] = field(default_factory=dict)
    caller_properties: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """What the object's chunk holds: title then body (search finds either)."""
        return f"{self.title}\n\n{self.content}".strip()

    @property
    def digest(self) -> str:
        """Identity of the object within its dataset: the same capture twice is one object."""
        key = json.dumps(["capture", self.type, self.title, self.content, self.project], ensure_ascii=False)
        return hashlib.sha256(key.encode()).hexdigest()

    def request(self) -> dict:
        """The inputs reprocess needs, exactly as the caller gave them (after validation)."""
        return {"summary": self.summary, "entities": self.entities, "template": self.template,
                "template_fields": self.template_fields, "properties": self.caller_properties,
                "type_given": self.type_given}


def parse_json_field(value: Any, name: str, expected: type) -> Any:
    """Entities/properties may arrive as JSON text (MCP clients); malformed JSON is an error."""
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise CaptureInputError(f"{name} is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if value is not None and not isinstance(value, expected):
        raise CaptureInputError(f"{name} must be a JSON {expected.__name__}, got {type(value).__name__}")
    return value


def draft_object(*, title: str, content: str | None, type: str | None, project: str | None, tags: list[str],
                 template: str | None, template_fields: dict[str, str] | None, summary: str | None,
                 entities: Any, properties: Any) -> ObjectDraft:
    """Apply the template (its type and properties win), check entity/property shapes."""
    title = " ".join((title or "").split())
    if not title:
        raise CaptureInputError("title is blank")
    caller_properties = parse_json_field(properties, "properties", dict) or {}
    raw_entities = parse_json_field(entities, "entities", list)
    typed = None if raw_entities is None else [
        {"name": e.name, "type": e.type} for e in type_entities(raw_entities)]
    body = (content or "").strip()
    obj_type = (type or "").strip().lower() or None
    if obj_type is not None and obj_type not in OBJECT_TYPES:
        raise CaptureInputError(f"unknown type {type!r}; expected one of {', '.join(OBJECT_TYPES)}")
    merged = dict(caller_properties)
    if template:
        tmpl = get_template(template)
        sections, template_properties = tmpl.render(template_fields or {})
        body = "\n\n".join(p for p in (body, sections) if p)
        obj_type = tmpl.object_type
        merged.update(template_properties)
    elif template_fields:
        raise CaptureInputError("template_fields given without a template")
    if not body:
        raise CaptureInputError("nothing to capture: give content or a template with its fields")
    return ObjectDraft(
        title=title, content=body, type=obj_type or DEFAULT_OBJECT_TYPE, type_given=obj_type is not None,
        project=(project or "").strip(), tags=_tags(tags), properties=merged,
        summary=(summary or "").strip() or None, entities=typed,
        template=get_template(template).name if template else None, template_fields=dict(template_fields or {}),
        caller_properties=caller_properties,
    )


def _tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for t in tags:
        for part in str(t).split(","):
            part = part.strip().lower()
            if part and part not in out:
                out.append(part)
    return out
