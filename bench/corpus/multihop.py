"""A generated multi-hop corpus (HotpotQA-shaped): one passage per item, invented names (so the
embedding model knows nothing beforehand), two-hop questions whose second passage shares few
words with the question, plus single-hop and comparison questions.

    generate(seed) -> (passages [(title, text)], questions [{question, answer, kind, support}])

Passages of one kind share their templates, so words alone do not tell the bridge passage apart
from its siblings: only the name the first passage mentions leads there.
"""

from __future__ import annotations

import random

_ON = "bar dor fen gal har kel lor mar nor pel quin ros sel tor val wen yor zan bel cor dal fin gor hal".split()
_MID = "a e i o u ae ia io ou ei".split()
_END = "n th s l r nd x k m sk wick ford ton by mere holt".split()


def _word(rng: random.Random, parts: int = 2) -> str:
    w = rng.choice(_ON) + "".join(rng.choice(_MID) + rng.choice(_ON) for _ in range(parts - 2))
    return (w + rng.choice(_MID) + rng.choice(_END)).capitalize()


class _Names:
    def __init__(self, rng: random.Random):
        self.rng, self.used = rng, set()

    def fresh(self, make) -> str:
        while True:
            name = make()
            if name not in self.used:
                self.used.add(name)
                return name


PROFESSIONS = "painter novelist architect composer engineer economist photographer chemist sculptor diplomat".split()
NATIONS = "Varnese Ostrian Caldish Merovan Tellic Anvarian".split()
GENRES = "drama thriller comedy western musical documentary".split()
SECTORS = "shipping textile software mining brewing aerospace".split()
FILM_WORDS = ("Amber Silent Iron Hollow Crimson Last Northern Glass Quiet Paper Broken Golden Winter Salt"
              " River Lantern Harbor Orchard Signal Meridian Corridor Garden Frontier Letter Engine").split()


def generate(seed: int = 16, people: int = 150, films: int = 120, companies: int = 80,
             universities: int = 12) -> tuple[list[tuple[str, str]], list[dict]]:
    rng = random.Random(seed)
    names = _Names(rng)
    unis = [names.fresh(lambda: f"University of {_word(rng, 3)}") for _ in range(universities)]
    persons = []
    for _ in range(people):
        full = names.fresh(lambda: f"{_word(rng)} {_word(rng, 3)}")
        persons.append({
            "name": full, "born": rng.randint(1925, 1985), "town": names.fresh(lambda: _word(rng, 3)),
            "job": rng.choice(PROFESSIONS), "nation": rng.choice(NATIONS), "uni": rng.choice(unis),
            "pet": names.fresh(lambda: _word(rng)),  # a unique word only this person's passage holds
        })
    passages: list[tuple[str, str]] = []
    for p in persons:
        surname = p["name"].split()[-1]
        passages.append((p["name"], (
            f"{p['name']} (born {p['born']}) is a {p['nation']} {p['job']}. {surname} grew up in {p['town']}, "
            f"a small place on the coast, and later studied at the {p['uni']}. Early work drew on the "
            f"folk tales of the region, and a long collaboration with the workshop of {p['pet']} followed. "
            f"{surname} has received several national awards and lives abroad.")))
    film_rows = []
    for _ in range(films):
        title = names.fresh(lambda: f"The {rng.choice(FILM_WORDS)} {rng.choice(FILM_WORDS)}")
        director, star = rng.sample(persons, 2)
        year = rng.randint(1950, 2020)
        film_rows.append({"title": title, "director": director, "star": star, "year": year})
        passages.append((title, (
            f"{title} is a {year} {rng.choice(GENRES)} film directed by {director['name']}. It stars "
            f"{star['name']} as a young {rng.choice(PROFESSIONS)} who returns home after many years. The film "
            f"premiered at a regional festival and was praised for its photography and score.")))
    company_rows = []
    for _ in range(companies):
        name = names.fresh(lambda: f"{_word(rng, 3)} {rng.choice(['Industries', 'Holdings', 'Works', 'Group'])}")
        founder = rng.choice(persons)
        year = rng.randint(1950, 2015)
        company_rows.append({"name": name, "founder": founder, "year": year})
        passages.append((name, (
            f"{name} is a {rng.choice(SECTORS)} company founded in {year} by {founder['name']}. Its first "
            f"office was a rented warehouse; today it employs several thousand people across three countries "
            f"and is listed on the national exchange.")))
    questions: list[dict] = []
    for f in rng.sample(film_rows, 40):
        d = f["director"]
        questions.append({"kind": "bridge", "answer": d["town"], "support": [f["title"], d["name"]],
                          "question": rng.choice([f"Where did the director of {f['title']} grow up?",
                                                  f"In which town was the director of {f['title']} raised?"])})
    for c in rng.sample(company_rows, 25):
        fo = c["founder"]
        questions.append({"kind": "bridge", "answer": fo["pet"], "support": [c["name"], fo["name"]],
                          "question": f"Whose workshop did the founder of {c['name']} collaborate with?"})
    for f in rng.sample(film_rows, 15):
        s = f["star"]
        questions.append({"kind": "bridge", "answer": s["uni"], "support": [f["title"], s["name"]],
                          "question": f"Where was the lead actor of {f['title']} educated?"})
    for f in rng.sample(film_rows, 10):
        questions.append({"kind": "single", "answer": f["director"]["name"], "support": [f["title"]],
                          "question": f"Who directed the film {f['title']}?"})
    for a, b in (rng.sample(film_rows, 2) for _ in range(10)):
        first = a if a["year"] < b["year"] else b
        questions.append({"kind": "comparison", "answer": first["title"], "support": [a["title"], b["title"]],
                          "question": f"Which film came out first, {a['title']} or {b['title']}?"})
    rng.shuffle(passages)
    return passages, questions
