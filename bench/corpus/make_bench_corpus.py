"""Deterministic generator of a synthetic benchmark corpus.

Produces readable, fictional company profiles (people, organisations, places,
years) built from a fixed set of sentence templates. Stdlib only; the output
depends solely on ``n_docs`` and ``seed``.

Usage::

    python make_bench_corpus.py OUT_DIR [N_DOCS]
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

FIRST_NAMES = [
    "Ada", "Bruno", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hector",
    "Irene", "Jasper", "Kaja", "Lorenzo", "Mina", "Nils", "Olga", "Pavel",
    "Quentin", "Rhea", "Stellan", "Tove", "Ugo", "Vera", "Wendel", "Xenia",
    "Yannick", "Zora", "Anouk", "Bastian", "Cyrus", "Delia", "Emil", "Freya",
]
LAST_NAMES = [
    "Abernathy", "Bergqvist", "Castellan", "Duroc", "Eriksen", "Falkner",
    "Grimaldi", "Halvorsen", "Ivers", "Jansky", "Kowalczyk", "Lindahl",
    "Marchetti", "Nakamura", "Oyelaran", "Petrescu", "Quillan", "Rosendahl",
    "Sandoval", "Thorvald", "Uriarte", "Vasquez", "Wexley", "Yilmaz",
    "Zeller", "Achterberg", "Brightman", "Corvino", "Dalgaard", "Eskildsen",
]
ORG_STEMS = [
    "Copperfield", "Saltmere", "Brightlane", "Northwick", "Greyhaven",
    "Ironbark", "Bluefjord", "Stormcrest", "Amberline", "Kingsreach",
    "Redcliff", "Silverton", "Oakhollow", "Westmarch", "Duskwater",
    "Frostvale", "Harrowgate", "Lowmoor", "Tidewell", "Emberly",
]
ORG_SUFFIXES = [
    "Robotics", "Foods", "Logistics", "Energy", "Textiles", "Analytics",
    "Pharmaceuticals", "Shipping", "Instruments", "Software", "Ceramics",
    "Aerospace", "Materials", "Media", "Bank",
]
INDUSTRY = {
    "Robotics": ("robotics", ["inspection robot", "warehouse robot", "robotic arm"]),
    "Foods": ("food", ["canned soup", "breakfast cereal", "smoked fish"]),
    "Logistics": ("logistics", ["freight service", "tracking platform", "courier network"]),
    "Energy": ("energy", ["wind turbine", "home battery", "solar panel"]),
    "Textiles": ("textile", ["wool fabric", "rain jacket", "linen sheet"]),
    "Analytics": ("data analytics", ["forecasting tool", "reporting dashboard", "risk model"]),
    "Pharmaceuticals": ("pharmaceutical", ["cough syrup", "allergy tablet", "vaccine"]),
    "Shipping": ("shipping", ["container service", "ferry line", "tanker fleet"]),
    "Instruments": ("instrument", ["pressure sensor", "laboratory scale", "weather station"]),
    "Software": ("software", ["accounting program", "mobile app", "database engine"]),
    "Ceramics": ("ceramics", ["porcelain tile", "kitchen sink", "insulator"]),
    "Aerospace": ("aerospace", ["small satellite", "drone engine", "cargo glider"]),
    "Materials": ("materials", ["carbon fibre", "recycled plastic", "insulation foam"]),
    "Media": ("media", ["evening newspaper", "radio station", "podcast network"]),
    "Bank": ("banking", ["savings account", "business loan", "payment card"]),
}
PRODUCT_NAMES = [
    "Kestrel", "Orion", "Willow", "Falcon", "Juniper", "Comet", "Marlin",
    "Beacon", "Harbor", "Tundra", "Aurora", "Cinder", "Puffin", "Vireo",
    "Lynx", "Sable", "Heron", "Quartz", "Nimbus", "Thistle",
]
PLACES = [
    "Varnholm", "Eastbridge", "Kellmouth", "Lindenfall", "Ostwick", "Brackenport",
    "Corvale", "Duneham", "Elsworth Bay", "Fenmarch", "Glasshaven", "Highmoor",
    "Ironvale", "Juniper Point", "Karstad", "Larkmouth",
]
RIVERS = ["Ossel River", "Vandra River", "Morrow River", "Kelling River", "Aune River"]
UNIVERSITIES = [
    "Varnholm University", "Kellmouth Institute of Technology",
    "University of Lindenfall", "Ostwick College", "Brackenport Polytechnic",
]
SUBJECTS = [
    "mechanical engineering", "economics", "chemistry", "computer science",
    "law", "physics", "marine biology", "business administration",
]
EVENTS = ["a fire", "a flood", "a severe storm", "a power failure", "a cyber attack"]

# Sentence templates. Each paragraph draws from its own pool.
FOUNDING = [
    "{org} is a {industry} company.",
    "{org} was founded in {y_found} in {place}.",
    "{founder} founded {org} together with {cofounder}.",
    "{org} began in a small workshop in {place} with {n_start} employees.",
    "{org} is located in {hq}. {hq} is located on the {river}.",
    "{founder} started {org} because {place} had no local supplier of {category}s.",
]
LEADERSHIP = [
    "In {y_ceo1} {ceo_old} became CEO of {org}.",
    "In {y_ceo2} {ceo_new} succeeded {ceo_old} as CEO of {org}.",
    "{ceo_old} stepped down in {y_ceo2} because the board of {org3} offered a new role.",
    "{ceo_new} is the CEO of {org}.",
    "{ceo_new} was born in {birthplace} in {y_birth}.",
    "{ceo_new} studied {subject} at {university}.",
    "{cto} joined {org} in {y_cto} as an engineer.",
    "{cto} is the chief technology officer of {org}.",
]
BUSINESS = [
    "{org} makes the {product}, a {category}.",
    "{org} was criticised in {y_product} because the {product} was delayed.",
    "The {product} was launched in {y_product}.",
    "Because demand for the {product} grew quickly, {org} hired {n_hire} new employees in {y_hire}.",
    "{org} employs about {n_emp} people.",
    "{org2} is a supplier of {org}.",
    "The largest customer of {org} is {org3}.",
    "{org} signed a partnership with {org3} in {y_partner}.",
    "{org} sells most of its products in {market}.",
]
EVENTS_POOL = [
    "{org} acquired {org2} in {y_acq}.",
    "{org2} was founded in {y_found2} in {place2}.",
    "After the acquisition, {org} moved part of its production to {place2}.",
    "{org} opened a new office in {market} in {y_office}.",
    "In {y_event} {event} damaged the factory of {org} in {hq}. Therefore production stopped for {n_weeks} weeks.",
    "In {y_award} {org} received the {award} for its work on the {product}.",
]

# Number of leading templates of each pool that every document includes.
MANDATORY = [2, 2, 1, 1]

TITLE_TEMPLATES = ["# {org}", "# Profile: {org}", "# Company Report: {org}", "# About {org}"]

MIN_WORDS, MAX_WORDS = 150, 250


def _words(text: str) -> int:
    return len(text.split())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _facts(rng: random.Random, org: str, others: list[str]) -> dict:
    """Draw a consistent set of facts (years ordered sensibly) for one document."""
    people = rng.sample([f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES], 5)
    suffix = org.split()[-1]
    industry, categories = INDUSTRY[suffix]
    y_found = rng.randint(1950, 2012)
    y_ceo1 = rng.randint(y_found + 1, 2018)
    y_ceo2 = rng.randint(y_ceo1 + 1, 2024)
    places = rng.sample(PLACES, 4)
    org2, org3 = rng.sample(others, 2)

    def after(y: int) -> int:
        return rng.randint(min(y + 1, 2024), 2024)

    y_product = after(y_found)
    y_acq = after(y_found)
    return {
        "org": org,
        "org2": org2,
        "org3": org3,
        "industry": industry,
        "category": rng.choice(categories),
        "product": f"{org.split()[0]} {rng.choice(PRODUCT_NAMES)}",
        "founder": people[0],
        "cofounder": people[1],
        "ceo_old": people[2],
        "ceo_new": people[3],
        "cto": people[4],
        "place": places[0],
        "hq": places[1],
        "place2": places[2],
        "birthplace": places[3],
        "market": rng.choice(PLACES),
        "river": rng.choice(RIVERS),
        "university": rng.choice(UNIVERSITIES),
        "subject": rng.choice(SUBJECTS),
        "event": rng.choice(EVENTS),
        "award": rng.choice(["National Innovation Prize", "Green Industry Award", "Export Prize"]),
        "y_found": y_found,
        "y_found2": rng.randint(1940, y_acq - 1),
        "y_ceo1": y_ceo1,
        "y_ceo2": y_ceo2,
        "y_birth": rng.randint(y_ceo2 - 60, y_ceo2 - 28),
        "y_cto": after(y_found),
        "y_product": y_product,
        "y_hire": after(y_product),
        "y_partner": after(y_found),
        "y_acq": y_acq,
        "y_office": after(y_found),
        "y_event": after(y_found),
        "y_award": after(y_product),
        "n_start": rng.randint(3, 12),
        "n_hire": rng.randrange(20, 400, 10),
        "n_emp": rng.randrange(150, 9000, 50),
        "n_weeks": rng.randint(2, 10),
    }


def _document(rng: random.Random, org: str, others: list[str]) -> str:
    facts = _facts(rng, org, others)
    title = rng.choice(TITLE_TEMPLATES).format(**facts)
    pools = [FOUNDING, LEADERSHIP, BUSINESS, EVENTS_POOL]
    # Each paragraph keeps its mandatory lead templates plus a random subset of
    # the rest; templates are always rendered in pool order so the text reads
    # naturally (introductions before references).
    chosen: list[set[int]] = []
    spare: list[tuple[int, int]] = []
    for p, (pool, lead) in enumerate(zip(pools, MANDATORY)):
        optional = list(range(lead, len(pool)))
        picked = set(rng.sample(optional, rng.randint(2, 3)))
        chosen.append(set(range(lead)) | picked)
        spare.extend((p, i) for i in optional if i not in picked)
    rng.shuffle(spare)

    def render() -> str:
        paras = [
            " ".join(pool[i].format(**facts) for i in sorted(idx))
            for pool, idx in zip(pools, chosen)
        ]
        return "\n\n".join([title, *paras]) + "\n"

    while _words(render()) < MIN_WORDS + 30 and spare:
        p, i = spare.pop()
        chosen[p].add(i)
    while _words(render()) > MAX_WORDS:
        p = max(range(len(pools)), key=lambda k: len(chosen[k]) - MANDATORY[k])
        chosen[p].discard(max(chosen[p]))
    return render()


def generate(n_docs: int = 60, seed: int = 7) -> list[tuple[str, str]]:
    """Return ``n_docs`` (file_name, text) pairs of unique synthetic documents."""
    rng = random.Random(seed)
    all_orgs = [f"{s} {x}" for s in ORG_STEMS for x in ORG_SUFFIXES]
    if n_docs > len(all_orgs):
        raise ValueError(f"n_docs must be <= {len(all_orgs)}")
    focal = rng.sample(all_orgs, n_docs)
    docs: list[tuple[str, str]] = []
    for i, org in enumerate(focal, start=1):
        others = [o for o in all_orgs if o != org]
        text = _document(rng, org, others)
        docs.append((f"{i:03d}-{_slug(org)}.md", text))
    assert len({t for _, t in docs}) == len(docs), "documents must be unique"
    return docs


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(argv[1])
    n_docs = int(argv[2]) if len(argv) > 2 else 60
    out.mkdir(parents=True, exist_ok=True)
    for name, text in generate(n_docs):
        (out / name).write_text(text, encoding="utf-8")
    print(f"wrote {n_docs} documents to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
