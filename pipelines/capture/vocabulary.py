"""The capture lane's fixed vocabulary (SPEC 9): object types, templates, entity types,
relationship predicates and the generic words that are never entities."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.pipelines.facts import CONTRADICTS

OBJECT_TYPES = ("decision", "lesson", "fix", "session", "research", "source", "synthesis", "idea")
DEFAULT_OBJECT_TYPE = "idea"

ENTITY_TYPES = ("technology", "project", "pattern", "concept")
DEFAULT_ENTITY_TYPE = "concept"

# The API spells predicates in camelCase; edges store them lower_snake like every relationship.
PREDICATES = ("causedBy", CONTRADICTS, "supports", "supersedes", "dependsOn", "ledTo", "implements", "mentions")
MENTIONS = "mentions"

# Generic words that say nothing as graph nodes ("fix" in a fix object is not a pattern).
ENTITY_STOPWORDS = frozenset("""
fix bug error issue problem solution test code change update feature function file folder directory
module class method server client request response command terminal console log output input data
config setting option parameter user admin system app application task work item object thing api url
endpoint route path build deploy run start stop version release branch commit merge
""".split())


class CaptureInputError(ValueError):  # a ValueError, so pydantic reports it as a validation error
    """A capture request that cannot be admitted (missing template field, bad entity shape...)."""


def edge_relationship(predicate: str) -> str:
    """causedBy -> caused_by: the stored relationship name of an allowed predicate."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", predicate).lower()


_BY_RELATIONSHIP = {edge_relationship(p): p for p in PREDICATES}


def predicate_of(relationship: str) -> str | None:
    """caused_by -> causedBy; None for a relationship outside the allow-list."""
    return _BY_RELATIONSHIP.get(relationship)


def canonical_predicate(name: str) -> str | None:
    """An allowed predicate however it is cased or spelled (causedBy, caused_by, CAUSEDBY)."""
    key = re.sub(r"[^a-z]", "", (name or "").lower())
    return next((p for p in PREDICATES if p.lower() == key), None)


# ------------------------------------------------------------------ entities


@dataclass(frozen=True)
class TypedEntity:
    name: str
    type: str


def entity_type(name: str | None) -> str:
    """Known entity types case-insensitively; anything else is a concept."""
    value = (name or "").strip().lower()
    return value if value in ENTITY_TYPES else DEFAULT_ENTITY_TYPE


def is_stopword(name: str) -> bool:
    return name.strip().lower() in ENTITY_STOPWORDS


def type_entities(raw: list, *, strict: bool = True) -> list[TypedEntity]:
    """Caller or model entities -> typed, trimmed, de-duplicated by case-insensitive name;
    stop-words and blank names dropped. A malformed caller entry is an error (strict), never
    dropped silently; a malformed model entry is skipped (the model is not the caller)."""
    out: dict[str, TypedEntity] = {}
    for i, item in enumerate(raw):
        if isinstance(item, str):
            name, kind = item, None
        elif isinstance(item, dict) and isinstance(item.get("name"), str) and (
                item.get("type") is None or isinstance(item.get("type"), str)):
            name, kind = item["name"], item.get("type")
        elif strict:
            raise CaptureInputError(
                f"entities[{i}] must be a name or an object {{'name': str, 'type': str}}; got {item!r}")
        else:
            continue
        name = " ".join(name.split())
        if not name or is_stopword(name):
            continue
        out.setdefault(name.lower(), TypedEntity(name, entity_type(kind)))
    return list(out.values())


# ------------------------------------------------------------------ templates


@dataclass(frozen=True)
class Template:
    name: str
    object_type: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return self.required + self.optional

    def render(self, values: dict[str, str]) -> tuple[str, dict[str, str]]:
        """("## Field" markdown, properties) from the template's fields; required ones enforced."""
        unknown = sorted(set(values) - set(self.fields))
        if unknown:
            raise CaptureInputError(
                f"template {self.name!r} has no field(s) {', '.join(unknown)}; its fields are {', '.join(self.fields)}")
        missing = [f for f in self.required if not str(values.get(f) or "").strip()]
        if missing:
            raise CaptureInputError(f"template {self.name!r} requires {', '.join(missing)}")
        sections, properties = [], {}
        for field in self.fields:
            value = str(values.get(field) or "").strip()
            if value:
                sections.append(f"## {field.replace('_', ' ').title()}\n{value}")
                properties[_camel(field)] = value
        return "\n\n".join(sections), properties


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(p.capitalize() for p in rest)


TEMPLATES: dict[str, Template] = {t.name: t for t in (
    Template("session", "session", ("goal",), ("worked", "failed", "next_steps")),
    Template("fix", "fix", ("symptom",), ("root_cause", "resolution", "severity", "files_affected")),
    Template("decision", "decision", ("chosen",), ("rationale", "alternatives", "decision_status")),
    Template("lesson", "lesson", ("cause",), ("impact", "prevention")),
    Template("research", "research", ("question",), ("findings", "sources")),
    Template("idea", "idea", (), ("feasibility", "idea_status", "dependencies")),
)}


def get_template(name: str) -> Template:
    template = TEMPLATES.get((name or "").strip().lower())
    if template is None:
        raise CaptureInputError(f"unknown template {name!r}; expected one of {', '.join(TEMPLATES)}")
    return template
