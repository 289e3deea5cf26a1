"""Extract stage, pure half: turn per-chunk LLM output into deterministic graph rows.

The LLM call itself lives in adapters/llm; this module only applies the identity and merge
rules of SPEC section 4, so re-running it on the same answers yields the same rows.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from engram.models.graph import ChunkExtraction, Edge
from engram.pipelines.dates import Stated, parse_when, sentences_naming, stated_interval
from engram.pipelines.relative_dates import absolutise
from engram.pipelines.facts import CONTAINS, about_text, fact_text, mention_text
from engram.pipelines.ids import (
    edge_id,
    entity_id,
    entity_type_id,
    interval_id,
    local_entity_id,
    normalise_name,
    normalise_relationship,
    summary_id,
)

DEFAULT_TYPE = "concept"


@dataclass(frozen=True)
class EntityRow:
    id: uuid.UUID
    name: str
    type_id: uuid.UUID
    type_name: str
    description: str


@dataclass(frozen=True)
class EntityTypeRow:
    id: uuid.UUID
    name: str


@dataclass(frozen=True)
class IntervalRow:
    """One statement of a fact: the validity its chunk gives it (re-assertions add rows)."""

    id: uuid.UUID
    chunk_id: uuid.UUID
    stated: Stated


@dataclass(frozen=True)
class EdgeRow:
    id: uuid.UUID
    source_id: uuid.UUID
    target_id: uuid.UUID
    relationship: str
    edge_text: str
    properties: dict[str, Any] = field(default_factory=dict)
    provenance: list[uuid.UUID] = field(default_factory=list)
    intervals: list[IntervalRow] = field(default_factory=list)


@dataclass(frozen=True)
class SummaryRow:
    id: uuid.UUID
    chunk_id: uuid.UUID
    text: str


@dataclass(frozen=True)
class GraphDraft:
    entities: list[EntityRow]
    entity_types: list[EntityTypeRow]
    edges: list[EdgeRow]
    summaries: list[SummaryRow]


@dataclass
class _Mention:
    """One kept node of one chunk: the entity it resolved to and how this chunk named it."""

    entity: uuid.UUID
    name: str
    description: str


def build_graph(
    dataset_id: uuid.UUID,
    chunks: list[tuple[uuid.UUID, str]],
    extractions: list[ChunkExtraction],
    title: str | None = None,
    intervals: bool = True,
    contexts: list[dict | None] | None = None,
) -> GraphDraft:
    """Rows for one document. Its main entities (the title when it reads as a name, and the name
    its text opens with) get a `contains` edge marked main from every chunk: recall's
    multi-hop lane reaches a passage through what it is about.

    intervals=False leaves out the facts' validity intervals (reading their dates is most of the
    cost): the same rows and texts otherwise, for a caller that only needs the texts.

    `contexts` holds each chunk's conversation data (session date, speakers, turns, resolved
    relative dates; None for other chunks): its facts' validity reads "yesterday" as the date
    it resolved to, and a conversation has no main entity (its chunks open with a speaker)."""
    if len(chunks) != len(extractions):
        raise ValueError(
            f"{len(chunks)} chunks but {len(extractions)} extractions; they must align"
        )
    entities: dict[uuid.UUID, EntityRow] = {}
    types: dict[uuid.UUID, EntityTypeRow] = {}
    edges: dict[uuid.UUID, EdgeRow] = {}
    summaries: list[SummaryRow] = []

    contexts = contexts or [None] * len(chunks)
    for (chunk, chunk_text), extraction, context in zip(chunks, extractions, contexts):
        mentions = _resolve_nodes(dataset_id, extraction, entities, types)
        for mention in mentions.values():
            text = mention_text(mention.name, mention.description)
            _add_edge(edges, dataset_id, chunk, mention.entity, CONTAINS, text, mention.description, chunk)
        for edge in extraction.graph.edges:
            source = mentions.get(edge.source_node_id)
            target = mentions.get(edge.target_node_id)
            if source is None or target is None:
                continue  # the LLM pointed at a node it never declared
            relationship = normalise_relationship(edge.relationship_name)
            description = (edge.description or "").strip()
            text = fact_text(source.name, relationship, target.name, description)
            ends = (source.entity, target.entity)
            stated = edge_interval(edge, chunk_text, source.name, target.name, context) if intervals else None
            _add_edge(edges, dataset_id, *ends, relationship, text, description, chunk, stated)
        summary = extraction.summary.summary.strip() or _fallback_summary(chunk_text)
        summaries.append(SummaryRow(summary_id(chunk), chunk, summary))

    if not any(contexts):
        _link_main_entities(dataset_id, chunks, extractions, title, entities, types, edges)
    return GraphDraft(
        list(entities.values()), list(types.values()), list(edges.values()), summaries
    )


def _resolve_nodes(
    dataset: uuid.UUID,
    extraction: ChunkExtraction,
    entities: dict[uuid.UUID, EntityRow],
    types: dict[uuid.UUID, EntityTypeRow],
) -> dict[str, _Mention]:
    """Local node id -> entity for one chunk, merging into the dataset-wide entity rows."""
    mentions: dict[str, _Mention] = {}
    first_local_by_name: dict[str, str] = {}
    for node in extraction.graph.nodes:
        name = " ".join(node.name.split())
        if not name or node.id in mentions:
            continue  # blank names are noise; a repeated local id keeps its first node
        key = normalise_name(name)
        ent_id = entity_id(dataset, name)
        if key in first_local_by_name:
            # Same name, distinct local id: the LLM says these are different things (two
            # "Jordan"s), so the second gets its own stable id derived from name + local id.
            ent_id = local_entity_id(ent_id, node.id)
        else:
            first_local_by_name[key] = node.id
        type_name = " ".join(node.type.split()).lower() or DEFAULT_TYPE
        type_id = entity_type_id(dataset, type_name)
        types.setdefault(type_id, EntityTypeRow(type_id, type_name))
        description = node.description.strip()
        existing = entities.get(ent_id)
        if existing is None:
            entities[ent_id] = EntityRow(ent_id, name, type_id, type_name, description)
        elif not existing.description and description:
            entities[ent_id] = replace(existing, description=description)
        mentions[node.id] = _Mention(ent_id, name, description)
    return mentions


_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_PARENTHESIS = re.compile(r"\s*\([^)]*\)\s*$")
MAX_TITLE_WORDS = 10
OPENING_CHARS = 4  # a name opening the first chunk (after at most "The ") is what the document is about
_QUOTES = re.compile("[\"\u201c\u201d]")
KNOWN_AS_CHARS = 300  # how far the opening sentence may run when it says the name its subject goes by
_KNOWN_AS = re.compile(r"\b(?:(?:commonly|better|simply|popularly|professionally|mononymously|also)\s+)?known"
                       r"\s+(?:professionally\s+|mononymously\s+)?as\s+[\"\u201c]?"
                       r"([A-Z][\w'\u2019-]*(?: [A-Z][\w'\u2019-]*){0,3})")
# The opening sentence ends at a full stop before a capital that is not an initial ("Philip K. Dick").
_FIRST_SENTENCE_END = re.compile(r"(?<!\b[A-Z])[.!?](?=\s+[A-Z\"\u201c])")


def main_title(title: str | None) -> str | None:
    """The title as an entity name: no file extension or trailing "(disambiguation)"; None when
    it does not read as a name (too long, a sentence, no letters)."""
    name = " ".join((title or "").split())
    if " " not in name:
        name = _EXTENSION.sub("", name).replace("_", " ").replace("-", " ") if _EXTENSION.search(name) else name
    name = _PARENTHESIS.sub("", name).strip()
    if not name or not any(c.isalpha() for c in name) or len(name.split()) > MAX_TITLE_WORDS:
        return None
    if name[-1] in ".!?;:" and not name.endswith((" Inc.", " Co.", " Ltd.", " Jr.")):
        return None
    return name


def _link_main_entities(dataset: uuid.UUID, chunks: list[tuple[uuid.UUID, str]],
                        extractions: list[ChunkExtraction], title: str | None,
                        entities: dict[uuid.UUID, EntityRow], types: dict[uuid.UUID, EntityTypeRow],
                        edges: dict[uuid.UUID, EdgeRow]) -> None:
    names: list[str] = []
    if (name := main_title(title)) is not None:
        names.append(name)
    if chunks:
        # Quotes dropped: a nickname inside the opening name (Bryan David "Butch" Vig) is part of it.
        opening = _QUOTES.sub("", chunks[0][1].lstrip()[: OPENING_CHARS + 80])
        for node in extractions[0].graph.nodes:
            at = opening.find(node.name)
            if node.name and 0 <= at <= OPENING_CHARS and node.type != "date":
                names.append(" ".join(node.name.split()))
                break
        # "Ronaldo Luis Nazario de Lima, commonly known as Ronaldo, ...": the name it goes by.
        first = chunks[0][1][:KNOWN_AS_CHARS]
        first = first[: end.start()] if (end := _FIRST_SENTENCE_END.search(first)) else first
        if names and (known := _KNOWN_AS.search(first)):
            names.append(known.group(1))
    for name in dict.fromkeys(names):
        ent = entity_id(dataset, name)
        if ent not in entities:
            type_id = entity_type_id(dataset, DEFAULT_TYPE)
            types.setdefault(type_id, EntityTypeRow(type_id, DEFAULT_TYPE))
            entities[ent] = EntityRow(ent, name, type_id, DEFAULT_TYPE, "")
        for chunk, _ in chunks:
            ident = edge_id(dataset, chunk, ent, CONTAINS)
            existing = edges.get(ident)
            if existing is None:
                edges[ident] = EdgeRow(ident, chunk, ent, CONTAINS, about_text(name),
                                       {"main": True}, [chunk])
            else:
                existing.properties["main"] = True


def _add_edge(
    edges: dict[uuid.UUID, EdgeRow],
    dataset: uuid.UUID,
    source: uuid.UUID,
    target: uuid.UUID,
    relationship: str,
    text: str,
    description: str | None,
    chunk: uuid.UUID,
    stated: Stated | None = None,
) -> None:
    """Insert or merge by identity (source, target, relationship); provenance stays ordered.
    Each statement of a fact adds a validity interval (structural edges have none)."""
    ident = edge_id(dataset, source, target, relationship)
    existing = edges.get(ident)
    if existing is None:
        properties: dict[str, Any] = {"description": description} if description else {}
        existing = edges[ident] = EdgeRow(ident, source, target, relationship, text, properties, [chunk])
        if stated is not None:
            existing.intervals.append(IntervalRow(interval_id(ident, chunk, 0), chunk, stated))
        return
    if stated is not None:
        ordinal = sum(i.chunk_id == chunk for i in existing.intervals)
        existing.intervals.append(IntervalRow(interval_id(ident, chunk, ordinal), chunk, stated))
    if chunk not in existing.provenance:
        existing.provenance.append(chunk)
    if description and not existing.properties.get("description"):
        # First non-empty description wins, as for entities; the text follows it.
        existing.properties["description"] = description
        edges[ident] = replace(existing, edge_text=text)


def edge_interval(edge: Edge, chunk_text: str, source_name: str, target_name: str,
                  context: dict | None = None) -> Stated:
    """The validity of one extracted fact: the model's valid_from / valid_to first, then the
    dates and tense of its description, then of the chunk's sentences naming both ends. In a
    conversation, relative phrases count as the dates they resolved to and the fact was said
    no earlier than its session."""
    resolved = (context or {}).get("dates") or []
    given = Stated(parse_when(edge.valid_from), parse_when(edge.valid_to))
    described = stated_interval(absolutise(edge.description or "", resolved))
    if described.valid_from is None and described.valid_to is None:
        sentences = " ".join(sentences_naming([chunk_text], [source_name, target_name]))
        described = described.merged(stated_interval(absolutise(sentences, resolved)))
    stated = given.merged(described)
    said = parse_when((context or {}).get("occurred_at"))
    return stated if said is None else stated.merged(Stated(asserted=said))


def _fallback_summary(chunk_text: str, limit: int = 200) -> str:
    """An empty LLM summary would embed as noise; the chunk's opening is a better stand-in."""
    text = " ".join(chunk_text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0]
