"""Deterministic offline extractor: what the LLM gateway answers when no provider is set.

Heuristics only (no network, no model), so remember -> recall works without a key and tests
and benchmarks are reproducible. Quality is "good enough to link names", not an LLM's.
A chat chunk (`Speaker: text` lines) is read by adapters/llm/offline_chat.py; names in a sentence
are found by adapters/llm/offline_mentions.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from engram.adapters.llm.offline_words import (
    LEGAL_SUFFIXES,
    PREPOSITIONS,
    RELATION_STOP,
    ROLES,
)
from engram.adapters.llm.offline_mentions import (
    EDGE_PUNCT,
    TRAILING_NUMERAL,
    Mention,
    inner_capitalised,
    keep_mention,
    find_mentions,
    split_sentences,
)
from engram.models.graph import RELATIONSHIP_MAX_LENGTH, ChunkExtraction, Edge, KnowledgeGraph, Node, SummarizedContent
from engram.pipelines.dates import aspect_words, stated_interval
from engram.pipelines.ids import normalise_name, normalise_relationship

SUMMARY_CHARS = 200
DESCRIPTION_CHARS = 100
MAX_RELATION_WORDS = 6

_DIGITS = re.compile(r"\b\d[\d,.]*\b")


def offline_chunk_extraction(text: str) -> ChunkExtraction:
    return ChunkExtraction(graph=offline_graph(text), summary=offline_summary(text))


def offline_summary(text: str) -> SummarizedContent:
    flat = " ".join(text.split())
    summary = ""
    for sentence in split_sentences(flat):
        candidate = f"{summary} {sentence}".strip()
        if summary and len(candidate) > SUMMARY_CHARS:
            break
        summary = candidate
    return SummarizedContent(
        summary=_truncate(summary, SUMMARY_CHARS), description=_truncate(flat, DESCRIPTION_CHARS)
    )


def offline_graph(text: str) -> KnowledgeGraph:
    # Imported here: the chat rules build on this module's.
    from engram.adapters.llm.offline_chat import chat_graph, chat_turns, is_header_line

    # A line that only dates a session ("1:56 pm on 8 May, 2023") states no fact.
    lines = [line for line in text.splitlines() if line.strip() and not is_header_line(line)]
    turns = chat_turns(lines)
    if turns is not None:
        return chat_graph(turns)
    graph = Graph()
    flat = " ".join(" ".join(lines).split())
    inner = inner_capitalised(flat)
    for sentence in split_sentences(flat):
        for part in _restated(sentence):
            # Each part links its own mentions; nodes and edges quote the sentence as written.
            link_mentions(graph, part, [m for m in find_mentions(part) if keep_mention(m, part, inner)], description=sentence)
    return graph.result()


_NAME = r"[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)*"
_ATTRIBUTED = re.compile(r"^According to [^,]{3,160}, (?=[A-Z])(.+)$")
_SUCCEEDED = re.compile(rf"^(?P<pre>.*?)(?P<x>{_NAME}) succeeded (?P<y>{_NAME}) as (?P<role>[a-z ]*?[A-Za-z]+ of) (?P<z>.+)$")


def _restated(sentence: str) -> list[str]:
    """The facts a sentence states, as sentences the mention chain reads right:
    "According to the society, X was founded in 1968." states "X was founded in 1968." (the
    attribution is the source's, kept as the description); "In 2024 B succeeded A as CEO of C."
    states "In 2024 B became CEO of C." and "In 2024 B succeeded A." (not A as CEO of C)."""
    attributed = _ATTRIBUTED.match(sentence)
    if attributed:
        sentence = attributed.group(1)
    succeeded = _SUCCEEDED.match(sentence)
    if succeeded:
        pre, x, y, role, z = succeeded.group("pre", "x", "y", "role", "z")
        return [f"{pre}{x} became {role} {z}", f"{pre}{x} succeeded {y}."]
    return [sentence]


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)  # normalised name (or legal-form alias) -> node
    ordered: list[Node] = field(default_factory=list)
    edges: dict[tuple[str, str, str], Edge] = field(default_factory=dict)

    def result(self) -> KnowledgeGraph:
        return KnowledgeGraph(nodes=self.ordered, edges=list(self.edges.values()))


def link_mentions(graph: Graph, sentence: str, mentions: list[Mention], description: str | None = None,
          relate: Callable[[str], str] | None = None) -> None:
    """The sentence's mentions as nodes, and an edge between each and the next; description
    (default: the sentence) is what nodes and edges quote; relate vets each relation name."""
    description = description or sentence
    edges = graph.edges
    resolved = [node_for(graph.nodes, graph.ordered, mention, description) for mention in mentions]
    if len(mentions) < 2:
        return
    # The validity the sentence states ("since 2015", "from 2015 to 2022") dates its facts.
    stated = stated_interval(sentence)
    valid_from = stated.valid_from.iso() if stated.valid_from else None
    valid_to = stated.valid_to.iso() if stated.valid_to else None
    added: list[tuple[tuple[str, str, str], bool]] = []
    # "She founded Acme in 1999": the verb before the first mention dates the later edge.
    previous = _relationship(sentence[: mentions[0].start], "")
    previous = "" if previous == "related_to" or previous.count("_") > 1 else previous
    for i in range(len(mentions) - 1):
        source, target = resolved[i], resolved[i + 1]
        start = i
        # A date is when a fact holds, never its subject: "X is a 1957 film directed by Y"
        # links X to Y across the date.
        while start > 0 and resolved[start].type == "date":
            start -= 1
        source = resolved[start]
        if source.id == target.id or source.type == "date":
            continue
        between = _DIGITS.sub(" ", sentence[mentions[start].end : mentions[i + 1].start])
        relationship = _relationship(between, previous if target.type == "date" else "")
        if relate is not None:
            relationship = relate(relationship)
        if relationship != "related_to":
            previous = relationship
        role = _possessive_role(between)
        if role and target.type != "date":
            # "Springfield's mayor is Maria Lopez": Maria Lopez -mayor_of-> Springfield.
            source, target, relationship = target, source, role
        key = (source.id, target.id, relationship)
        if key not in edges:
            edges[key] = Edge.model_construct(
                source_node_id=source.id,
                target_node_id=target.id,
                relationship_name=relationship,
                description=description,
                valid_from=valid_from,
                valid_to=valid_to,
            )
            added.append((key, source.type == "date" or target.type == "date" or start != i))
    if any(not dated for _, dated in added):
        # The sentence's dates are the validity of its facts now: "Springfield mayor_in 2015"
        # beside "Maria Lopez mayor_of Springfield (from 2015)" would only repeat it.
        for key, dated in added:
            if dated:
                del edges[key]


def node_for(
    nodes: dict[str, Node], ordered: list[Node], mention: Mention, sentence: str
) -> Node:
    key = normalise_name(mention.name)
    tokens = key.split("_")
    # "Acme Corp" and "Acme" name one organization, whichever comes first.
    legal = len(tokens) > 1 and tokens[-1].rstrip(".") in LEGAL_SUFFIXES
    base = "_".join(tokens[:-1]) if legal else ""
    node = nodes.get(key) or (nodes.get(base) if base else None)
    if node is None and len(tokens) == 1 and mention.type != "date":
        # "Ruffin" after "Phillip Gene Ruffin": a surname (or first name) alone is the same person.
        # A first name alone only for a known person: "Cadbury" is not "Cadbury Dairy Milk".
        node = next((n for n in ordered if n.type in ("person", "concept") and " " in n.name
                     and not TRAILING_NUMERAL.search(n.name)  # "Jaws" is not "Jaws 2"
                     and (tokens[0] == normalise_name(n.name).split("_")[-1]
                          or (n.type == "person" and tokens[0] == normalise_name(n.name).split("_")[0]))),
                    None)
    if node is None:
        # model_construct: fields are built here, validation would only cost time.
        node = Node.model_construct(
            id=f"n{len(ordered) + 1}",
            name=mention.name,
            type=mention.type,
            description=_truncate(sentence, DESCRIPTION_CHARS),
        )
        ordered.append(node)
    elif node.type == "concept" and mention.type != "concept":
        node.type = mention.type  # a later, clearer mention sharpens the guess
    nodes.setdefault(key, node)
    if base:
        nodes.setdefault(base, node)
        if node.type == "concept":
            node.type = "organization"
    return node


def _possessive_role(between: str) -> str | None:
    """"'s mayor was" / "'s former CEO is" between two mentions: the role, as "mayor_of"."""
    if not between.startswith(("'s", "\u2019s")):
        return None
    words = [w.strip(EDGE_PUNCT).lower() for w in between[2:].split()]
    words = [w for w in words if w and w not in RELATION_STOP]
    words, _, _ = aspect_words(words)
    if len(words) == 1 and words[0] in ROLES:
        return f"{words[0]}_of"
    return None


def _relationship(between: str, previous: str) -> str:
    """Verb phrase between two mentions, minus auxiliaries/articles: "is the CEO of" -> ceo_of.

    previous is the sentence's last real relationship, given only when the target is a date.
    """
    if between.startswith(("'s", "\u2019s")):
        between = between[2:]  # the possessive of the left mention, not a relation word
    words = [w.strip(EDGE_PUNCT).lower() for w in between.split()]
    words = [w for w in words if w and w not in RELATION_STOP and any(c.isalnum() for c in w)]
    # Tense and change of state are time, not relationship: "became/former/re-elected mayor of" -> mayor_of.
    words, _, _ = aspect_words(words)
    if not words or len(words) > MAX_RELATION_WORDS:
        return "related_to"
    if all(w in PREPOSITIONS for w in words):
        # "Alice founded Acme in 1999": the date edge reads "founded_in", not a bare "in".
        verb = [w for w in previous.split("_") if w and w not in PREPOSITIONS]
        if verb and len(verb) + len(words) <= MAX_RELATION_WORDS:
            words = verb + words
        else:
            return "related_to"
    name = normalise_relationship(" ".join(words))
    return name if len(name) <= RELATIONSHIP_MAX_LENGTH else "related_to"  # a URL is no relationship


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut if cut else text[:limit]


# A one-time event has one year: two facts giving one subject different years for it disagree.
_ONCE = re.compile(r"^(?P<what>.+ (?:founded|established|born|built|completed|opened|incorporated|died|created)"
                   r"(?: [a-z]+)?) (?P<year>1\d{3}|20\d{2})$")
_FACT_LINE = re.compile(r"^\[(F\d+)\] (.+)$", re.M)


def offline_contradictions(text: str) -> dict:
    """The contradiction check offline: the facts ("[F1] Alder Bay University founded in 1962")
    that date one subject's one-time event (founded, born, built, opened...) in different years."""
    seen: dict[str, list[tuple[str, str]]] = {}
    found = []
    for fid, fact in _FACT_LINE.findall(text):
        once = _ONCE.match(fact.strip())
        if once is None:
            continue
        what, year = once.group("what"), once.group("year")
        for other_fid, other_year in seen.setdefault(what, []):
            if other_year != year:
                found.append({"first_fact_id": other_fid, "second_fact_id": fid, "confidence": 0.9,
                              "reason": f"one event, two years: {what} {other_year} or {year}"})
        seen[what].append((fid, year))
    return {"contradictions": found}
