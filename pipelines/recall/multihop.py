"""Multi-hop graph expansion over the passage–entity graph (HippoRAG-style, two steps of a
personalised walk): entities named in the question and in the first-hop passages carry
weight to the passages that mention them, most to a passage whose *main* entity (its
document's title or opening name) it is. So a bridge passage that shares few words with the
question is reached through the entity the first passage names.

The graph is the `contains` edges chunk -> entity written at load; entities match by the name
rules of pipelines/recall/names.py (normalised name or an alias: "Moscow State University" ~
"Lomonosov Moscow State University"). Each reached passage keeps the facts (fact edges of the
seed passage about the bridging entity) that connected it.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from engram.pipelines.facts import row_fact_text
from engram.pipelines.ids import normalise_name
from engram.pipelines.recall.context import RecallContext
from engram.pipelines.recall.names import JOINERS, Matcher, aliases, lookup, same_entity

__all__ = ["Bridge", "Matcher", "aliases", "expand", "ids", "provenance", "question_names", "same_entity",
           "strengths"]  # the name rules live in pipelines/recall/names.py

MAIN = 1.0  # the bridging entity is what the reached passage is about
MENTION = 0.25  # ... or merely named in it
QUESTION_WEIGHT = 1.0  # an entity the question names, against 1.0 for the best first-hop passage
MAX_ENTITY_PASSAGES = 50  # entities in more passages than this are too common to bridge
# ... and so are entities in more than this share of the datasets' chunks (a conversation's speakers,
# a company's own name in its knowledge base): naming them says nothing about which passage answers.
COMMON_SHARE = 0.25
MIN_COMMON = 8  # a small dataset's entities are never too common by share alone
MAX_SURNAME_PASSAGES = 10  # a lone word named in more passages than this is no surname
MAX_LOOSE_SURNAMES = 8  # uncued lone names looked up as surnames per question
SOURCES = 4  # passages whose entities are expanded (seeds and passages the question names)
RESTART = 0.5  # share of a source's own mass kept in its score
KEEP = 0.15  # passages scoring below this share of the best are noise, not bridges
MAX_NGRAM = 6
MAX_VIA = 4  # linking facts shown per passage
# An entity named next to the question's relation word in a source passage is the bridge asked for:
# its mass counts 1 + CUE times.
CUE = 2.0
CUE_BEFORE, CUE_AFTER = 5, 2  # words around the mention that may hold the relation word
STEM = 5  # relation words match on their first letters: director ~ directed, composer ~ composed
_WORD = re.compile(r"[\w&'\u2019.-]+")
_DATE_LIKE = re.compile(r"^[\d_.,/-]+$|^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*_\d")
_SMALL = frozenset("a an and the of in on at to for by with from or is was are were who what which when "
                   "where why how did does do has have had that this".split())


@dataclass
class Bridge:
    chunk_id: uuid.UUID
    score: float
    entities: list[str] = field(default_factory=list)  # display names that linked it
    facts: list[str] = field(default_factory=list)
    edge_ids: list[uuid.UUID] = field(default_factory=list)
    seed: bool = False  # a first-hop passage (or one the question names), not reached through a link


def _capitalised(word: str) -> bool:
    """A name's word: "Jaws", "1982", or camel case ("iPhone", "eBay")."""
    return word[:1].isupper() or word[:1].isdigit() or (word[:1].islower() and any(c.isupper() for c in word[1:]))


def question_names(question: str) -> tuple[list[str], list[str]]:
    """(exact keys, alias keys) the question may name: word n-grams whose first and last words are
    capitalised (or, for an all-lower-case question, every n-gram of two or more content words)."""
    words = [w.strip(".'\u2019-") for w in _WORD.findall(question)]
    words = [w for w in words if w]
    lowered = question == question.lower()
    exact: list[str] = []
    named: list[str] = []
    for i, first in enumerate(words):
        for j in range(i, min(len(words), i + MAX_NGRAM)):
            span = words[i : j + 1]
            last = span[-1]
            if span[0].lower() in _SMALL or last.lower() in _SMALL:
                continue
            capital = _capitalised(first) and not first[:1].isdigit() and _capitalised(last) \
                and all(_capitalised(w) or w.lower() in JOINERS for w in span)
            if not capital and not (lowered and len(span) >= 2):
                continue
            if i == 0 and len(span) == 1 and not lowered and first.lower() in _SMALL:
                continue
            key = normalise_name(" ".join(span))
            exact.append(key)
            if capital and len(span) >= 2:
                named.append(key)
    return list(dict.fromkeys(exact)), list(dict.fromkeys(named))


def relation_stems(question: str, names: Iterable[str]) -> set[str]:
    """Stems of the question's content words outside the names it mentions ("director", "composer")."""
    named = {w for key in names for w in key.split("_")}
    return {w[:STEM] for w in (m.lower() for m in re.findall(r"[A-Za-z]+", question))
            if len(w) >= STEM and w not in _SMALL and w not in named}


def cued(text: str, name: str, stems: set[str]) -> bool:
    """Whether a mention of `name` in `text` has a relation word within a few words of it."""
    if not stems or not name:
        return False
    at = text.find(name)
    while at >= 0:
        before = text[:at].split()[-CUE_BEFORE:]
        after = text[at + len(name):].split()[:CUE_AFTER]
        if any(re.sub(r"[^a-z]", "", w.lower())[:STEM] in stems for w in before + after):
            return True
        at = text.find(name, at + len(name))
    return False


def _bridgeable(row: dict) -> bool:
    return (row.get("type") or "") != "date" and not _DATE_LIKE.match(row["name"]) and len(row["name"]) > 1


def common(degree: int, total: int | None) -> bool:
    """Whether an entity named in `degree` of the datasets' `total` chunks is too common to link by."""
    return bool(total) and degree > max(MIN_COMMON, COMMON_SHARE * total)


def _links(ctx: RecallContext, names: Iterable[str], extra_patterns: Iterable[str] = (),
           surnames: Iterable[str] = ()) -> list[dict]:
    """Passages mentioning entities with these names or their aliases (both directions), and
    full names ending in one of `surnames`; entities too common to say which passage answers left out."""
    keys, patterns = lookup(names, extra_patterns, surnames)
    if not keys:
        return []
    return [r for r in ctx.search.entity_passages(ctx.datasets, keys, patterns, MAX_ENTITY_PASSAGES)
            if _bridgeable(r) and not common(r["degree"], r.get("total"))]


def _specificity(degree: int) -> float:
    return 1.0 / (1.0 + math.log(max(1, int(degree))))


def expand(ctx: RecallContext, seeds: Sequence[uuid.UUID] | Callable[[], Sequence[uuid.UUID]],
           limit: int) -> list[Bridge]:
    """Passages reached from the question's entities and the seed passages, best first. `seeds`
    may be a callable: it is called once the question's names are looked up (so a first hop that
    needs the question's vector overlaps those reads).

    Step 1, passage mass: a seed weighs 1/(rank+1); a passage about (or naming) an entity the
    question names gains QUESTION_WEIGHT·specificity. Step 2: every entity of those passages
    carries the mass of the strongest of them to the passages that mention it (MAIN when it is
    what they are about), never back to the passage it came from. A passage's score is its own
    mass plus what reaches it.
    """
    mass: dict[uuid.UUID, float] = {}
    bridges: dict[uuid.UUID, Bridge] = {}
    exact, named = question_names(ctx.question)
    _question_mass(ctx, exact, named, mass, bridges)
    for rank, cid in enumerate(seeds() if callable(seeds) else seeds):
        mass[cid] = mass.get(cid, 0.0) + 1.0 / (rank + 1)
    # The strongest passages hand their mass on (a bounded walk: one more step).
    sources = dict(sorted(mass.items(), key=lambda kv: -kv[1])[:SOURCES])
    weight, display, seed_entity, surnames = _source_entities(ctx, sources, relation_stems(ctx.question, exact))
    _hand_on(ctx, weight, display, surnames, bridges)
    for cid, m in mass.items():  # restart mass: the walk starts from the seeds
        bridge = bridges.setdefault(cid, Bridge(cid, 0.0))
        bridge.score += RESTART * m
        bridge.seed = True
    best = max((b.score for b in bridges.values()), default=0.0)
    ranked = sorted((b for b in bridges.values() if b.score >= KEEP * best), key=lambda b: (-b.score, str(b.chunk_id)))
    ranked = ranked[:limit]
    _attach_facts(ctx, ranked, weight, seed_entity)
    return ranked


def _question_mass(ctx: RecallContext, exact: list[str], named: list[str], mass: dict[uuid.UUID, float],
                   bridges: dict[uuid.UUID, Bridge]) -> None:
    """Step 1's question part: passages about (or naming) an entity the question names gain mass."""
    asked = {r["name"]: r["display_name"] for r in (ctx.search.entities_named(ctx.datasets, exact) if exact else [])
             if _bridgeable(r)}
    # A name inside a longer name the question asks for is dropped.
    asked = {n: shown for n, shown in asked.items()
             if not any(other != n and f"_{n}_" in f"_{other}_" for other in asked)}
    if not (asked or named):
        return
    naming = Matcher(list(asked) + named)
    for link in _links(ctx, asked, named):
        names = naming(link["name"])
        if not names:
            continue
        gain = QUESTION_WEIGHT * _specificity(link["degree"]) * (MAIN if link["main"] else MENTION)
        mass[link["chunk_id"]] = mass.get(link["chunk_id"], 0.0) + gain
        bridge = bridges.setdefault(link["chunk_id"], Bridge(link["chunk_id"], 0.0))
        bridge.score += gain
        shown = asked.get(names[0], link["display_name"])
        if shown not in bridge.entities:
            bridge.entities.append(shown)
            bridge.facts.append(f"the question names {shown}")


def _lone(name: str) -> bool:
    """A one-word name (no "_" joins words) that starts with a letter: maybe a surname."""
    return "_" not in name and name[:1].isalpha()


def _source_entities(ctx: RecallContext, sources: dict[uuid.UUID, float], stems: set[str]):
    """The entities of the source passages: the mass each carries per source, its display name, its
    id per (source, name), and the lone proper names among them (name -> cued)."""
    weight: dict[str, dict[uuid.UUID, float]] = {}
    display: dict[str, str] = {}
    seed_entity: dict[tuple[uuid.UUID, str], uuid.UUID] = {}
    surnames: dict[str, bool] = {}  # lone proper names in the sources -> cued
    mentions = [r for r in ctx.search.chunk_entities(ctx.datasets, list(sources)) if _bridgeable(r)] if sources else []
    # A source's text decides a cue (only when the question has relation words) and a lone name: read
    # just those sources' texts, and only the ones no ranked list has read already.
    texts = {cid: r["text"] for cid, r in ctx.chunk_rows(
        [r["chunk_id"] for r in mentions if stems or _lone(r["name"])]).items()}
    for row in mentions:
        cue = 1.0 + CUE if cued(texts.get(row["chunk_id"], ""), row["display_name"], stems) else 1.0
        weight.setdefault(row["name"], {})[row["chunk_id"]] = sources[row["chunk_id"]] * cue
        display.setdefault(row["name"], row["display_name"])
        seed_entity[(row["chunk_id"], row["name"])] = row["id"]
        if _lone(row["name"]) and not re.search(rf"\b{re.escape(row['name'])}\b", texts.get(row["chunk_id"], "")):
            # "an opera by Mozart", "founded by Tramiel": a surname alone finds the full name (a cued
            # one any full name, else a person's). A word the passage also writes in lower case
            # ("magazine" beside "Harper's Magazine") is a common noun.
            surnames[row["name"]] = surnames.get(row["name"], False) or cue > 1.0
    return weight, display, seed_entity, surnames


def _hand_on(ctx: RecallContext, weight: dict[str, dict[uuid.UUID, float]], display: dict[str, str],
             surnames: dict[str, bool], bridges: dict[uuid.UUID, Bridge]) -> None:
    """Step 2: each source entity carries its strongest source's mass to the passages naming it."""
    # Every cued lone name, and the uncued ones of the strongest sources only: each is looked up as
    # "%_name", every full name ending in it (a bounded number of lookups per question).
    loose = sorted((n for n, c in surnames.items() if not c), key=lambda n: (-max(weight[n].values()), n))
    dropped = set(loose[MAX_LOOSE_SURNAMES:])
    surnames = {n: c for n, c in surnames.items() if n not in dropped}
    links = _links(ctx, weight, surnames=surnames)
    # A lone word finds full names ending in it only while it is rare itself (bench/NOTES.md).
    degree = {link["name"]: link["degree"] for link in links}
    rare = {n: c for n, c in surnames.items() if degree.get(n, MAX_ENTITY_PASSAGES + 1) <= MAX_SURNAME_PASSAGES}
    matching = Matcher(weight, [n for n, c in rare.items() if c], [n for n, c in rare.items() if not c])
    for link in links:
        for name in matching(link["name"]):
            # The strongest passage naming the entity carries it, not the sum of all: an entity every
            # passage on the topic names ("Boris Pasternak" beside each Doctor Zhivago) is the topic,
            # where the bridge is named once, in the passage about what the question names.
            carried = max((w for origin, w in weight[name].items() if origin != link["chunk_id"]), default=0.0)
            if carried <= 0:
                continue
            gain = carried * _specificity(link["degree"]) * (MAIN if link["main"] else MENTION)
            bridge = bridges.setdefault(link["chunk_id"], Bridge(link["chunk_id"], 0.0))
            bridge.score += gain
            if display[name] not in bridge.entities:
                bridge.entities.append(display[name])


def _attach_facts(ctx: RecallContext, bridges: list[Bridge], weight: dict[str, dict[object, float]],
                  seed_entity: dict[tuple[uuid.UUID, str], uuid.UUID]) -> None:
    """Each bridge's provenance: the seed passages' facts about the entities that linked it
    (visible facts only: supersession and as_of apply), else the question naming them."""
    wanted = {e for e in seed_entity.values()}
    seeds = list({c for c, _ in seed_entity})
    facts = ctx.search.facts_in_chunks(ctx.datasets, seeds, list(wanted), ctx.window) if wanted else []
    by_entity: dict[uuid.UUID, list[dict]] = {}
    for f in facts:
        by_entity.setdefault(f["source_id"], []).append(f)
        by_entity.setdefault(f["target_id"], []).append(f)
    normalised = {normalise_name(n): n for n in weight}
    for bridge in bridges:
        for shown in bridge.entities:
            name = normalised.get(normalise_name(shown), normalise_name(shown))
            origins = weight.get(name, {})
            for (chunk, ent_name), ent in seed_entity.items():
                if ent_name != name or chunk == bridge.chunk_id or chunk not in origins:
                    continue
                for f in by_entity.get(ent, [])[:2]:
                    if f["id"] not in bridge.edge_ids:
                        bridge.edge_ids.append(f["id"])
                        bridge.facts.append(row_fact_text(f))


def strengths(bridges: Iterable[Bridge]) -> dict[uuid.UUID, float]:
    """Each passage's score as a share of the best passage reached through a link (capped at 1):
    how far a bridge stands above the rest, measured against bridges, not the seeds' own mass."""
    bridges = list(bridges)
    reached = [b.score for b in bridges if not b.seed] or [b.score for b in bridges]
    best = max(reached, default=0.0)
    return {b.chunk_id: min(1.0, b.score / best) if best > 0 else 1.0 for b in bridges}


def provenance(bridge: Bridge) -> tuple[list[str], list[uuid.UUID]]:
    return (bridge.facts[:MAX_VIA] or [f"linked through {', '.join(bridge.entities)}"]), bridge.edge_ids


def ids(bridges: Iterable[Bridge]) -> list[uuid.UUID]:
    return [b.chunk_id for b in bridges]
