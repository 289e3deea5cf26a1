"""Multi-hop graph expansion over the passage–entity graph (HippoRAG-style, two steps of a
personalised walk): entities named in the question and in the first-hop passages carry
weight to the passages that mention them, most to a passage whose *main* entity (its
document's title or opening name) it is. So a bridge passage that shares few words with the
question is reached through the entity the first passage names.

The graph is the `contains` edges chunk -> entity written at load; entities match by normalised
name or as aliases (a name that is a leading or trailing run of at least two words of another:
"Moscow State University" ~ "Lomonosov Moscow State University"). Each reached passage keeps
the facts (fact edges of the seed passage about the bridging entity) that connected it.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engram.pipelines.facts import row_fact_text
from engram.pipelines.ids import normalise_name
from engram.pipelines.recall.context import RecallContext

MAIN = 1.0  # the bridging entity is what the reached passage is about
MENTION = 0.25  # ... or merely named in it
QUESTION_WEIGHT = 1.0  # an entity the question names, against 1.0 for the best first-hop passage
MAX_ENTITY_PASSAGES = 50
SOURCES = 4  # passages whose entities are expanded (seeds and passages the question names)
RESTART = 0.5  # share of a source's own mass kept in its score
KEEP = 0.15  # passages scoring below this share of the best are noise, not bridges  # entities in more passages than this are too common to bridge
MAX_NGRAM = 6
MAX_VIA = 4  # linking facts shown per passage
_WORD = re.compile(r"[\w&'\u2019.-]+")
_DATE_LIKE = re.compile(r"^[\d_.,/-]+$|^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*_\d")
_JOINERS = frozenset("of and the de du da di van von der del la le & for on at in y".split())
_SMALL = frozenset("a an and the of in on at to for by with from or is was are were who what which when "
                   "where why how did does do has have had that this".split())


@dataclass
class Bridge:
    chunk_id: uuid.UUID
    score: float
    entities: list[str] = field(default_factory=list)  # display names that linked it
    facts: list[str] = field(default_factory=list)
    edge_ids: list[uuid.UUID] = field(default_factory=list)


# A company's legal form is not part of how texts name it: "Apple" ~ "Apple Inc.".
_LEGAL_FORMS = ("inc", "inc.", "corp", "corp.", "corporation", "ltd", "ltd.", "plc", "llc", "gmbh")


def aliases(name: str) -> set[str]:
    """The normalised name, its leading / trailing runs of at least two words, and the name
    without a company's legal form ("apple_inc." -> "apple")."""
    words = name.split("_")
    out = {name}
    for n in range(2, len(words)):
        out.add("_".join(words[:n]))
        out.add("_".join(words[-n:]))
    if len(words) > 1 and words[-1] in _LEGAL_FORMS:
        out.add("_".join(words[:-1]))
    return out


def _lookup_keys(name: str) -> set[str]:
    """Entity names to look up for `name`: its aliases, and for a short name the same name with a
    legal form ("apple" finds "apple_inc."; same_entity needs no such list: stripping suffices)."""
    out = aliases(name)
    if name.count("_") <= 1 and name.rsplit("_", 1)[-1] not in _LEGAL_FORMS:
        out.update(f"{name}_{form}" for form in _LEGAL_FORMS)
    return out


def _capitalised(word: str) -> bool:
    """A name's word: "Jaws", "1982", or camel case ("iPhone", "eBay")."""
    return word[:1].isupper() or word[:1].isdigit() or (word[:1].islower() and any(c.isupper() for c in word[1:]))


def same_entity(a: str, b: str) -> bool:
    return a == b or a in aliases(b) or b in aliases(a)


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
                and all(_capitalised(w) or w.lower() in _JOINERS for w in span)
            if not capital and not (lowered and len(span) >= 2):
                continue
            if i == 0 and len(span) == 1 and not lowered and first.lower() in _SMALL:
                continue
            key = normalise_name(" ".join(span))
            exact.append(key)
            if capital and len(span) >= 2:
                named.append(key)
    return list(dict.fromkeys(exact)), list(dict.fromkeys(named))


def _bridgeable(row: dict) -> bool:
    return (row.get("type") or "") != "date" and not _DATE_LIKE.match(row["name"]) and len(row["name"]) > 1


def _links(ctx: RecallContext, names: Iterable[str], extra_patterns: Iterable[str] = ()) -> list[dict]:
    """Passages mentioning entities with these names or their aliases (both directions)."""
    names = [n for n in names if n]
    keys = set()
    for name in names:
        keys |= _lookup_keys(name)
    grown = [n for n in list(names) + list(extra_patterns) if "_" in n]
    patterns = sorted({f"%\\_{n}" for n in grown} | {f"{n}\\_%" for n in grown})
    if not keys:
        return []
    return [r for r in ctx.search.entity_passages(ctx.datasets, sorted(keys), patterns, MAX_ENTITY_PASSAGES)
            if _bridgeable(r)]


def _specificity(degree: int) -> float:
    return 1.0 / (1.0 + math.log(max(1, int(degree))))


def expand(ctx: RecallContext, seeds: Sequence[uuid.UUID], limit: int) -> list[Bridge]:
    """Passages reached from the question's entities and the seed passages, best first.

    Step 1, passage mass: a seed weighs 1/(rank+1); a passage about (or naming) an entity the
    question names gains QUESTION_WEIGHT·specificity. Step 2: every entity of those passages
    carries their mass to the passages that mention it (MAIN when it is what they are about),
    never back to the passage it came from. A passage's score is its own mass plus what reaches it.
    """
    mass: dict[uuid.UUID, float] = {cid: 1.0 / (rank + 1) for rank, cid in enumerate(seeds)}
    bridges: dict[uuid.UUID, Bridge] = {}
    exact, named = question_names(ctx.question)
    asked = {r["name"]: r["display_name"] for r in (ctx.search.entities_named(ctx.datasets, exact) if exact else [])
             if _bridgeable(r)}
    if asked or named:
        for link in _links(ctx, asked, named):
            names = [n for n in list(asked) + named if same_entity(n, link["name"])]
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
    # The strongest passages hand their mass on (a bounded walk: one more step).
    sources = dict(sorted(mass.items(), key=lambda kv: -kv[1])[:SOURCES])
    weight: dict[str, dict[uuid.UUID, float]] = {}
    display: dict[str, str] = {}
    seed_entity: dict[tuple[uuid.UUID, str], uuid.UUID] = {}
    for row in ctx.search.chunk_entities(ctx.datasets, list(sources)) if sources else []:
        if not _bridgeable(row):
            continue
        weight.setdefault(row["name"], {})[row["chunk_id"]] = sources[row["chunk_id"]]
        display.setdefault(row["name"], row["display_name"])
        seed_entity[(row["chunk_id"], row["name"])] = row["id"]
    for link in _links(ctx, weight):
        for name in (n for n in weight if same_entity(n, link["name"])):
            carried = sum(w for origin, w in weight[name].items() if origin != link["chunk_id"])
            if carried <= 0:
                continue
            gain = carried * _specificity(link["degree"]) * (MAIN if link["main"] else MENTION)
            bridge = bridges.setdefault(link["chunk_id"], Bridge(link["chunk_id"], 0.0))
            bridge.score += gain
            if display[name] not in bridge.entities:
                bridge.entities.append(display[name])
    for cid, m in mass.items():  # restart mass: the walk starts from the seeds
        bridges.setdefault(cid, Bridge(cid, 0.0)).score += RESTART * m
    best = max((b.score for b in bridges.values()), default=0.0)
    ranked = sorted((b for b in bridges.values() if b.score >= KEEP * best), key=lambda b: (-b.score, str(b.chunk_id)))
    ranked = ranked[:limit]
    _attach_facts(ctx, ranked, weight, seed_entity)
    return ranked


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


def provenance(bridge: Bridge) -> tuple[list[str], list[uuid.UUID]]:
    return (bridge.facts[:MAX_VIA] or [f"linked through {', '.join(bridge.entities)}"]), bridge.edge_ids


def ids(bridges: Iterable[Bridge]) -> list[uuid.UUID]:
    return [b.chunk_id for b in bridges]
