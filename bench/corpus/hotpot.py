"""A held-out HotpotQA-style set ("distractor" setting): 84 two-hop questions (70 bridge, 14
comparison), each with its own 10 passages (the 2 supporting paragraphs and 8 distractors chosen
as HotpotQA chose them: by their words' likeness to the question: same titles, same surnames,
the same club's city, the same author's other novels). All 840 passages form one pool, one
passage per item (HotpotQA's set A held 500).

    generate(seed) -> (passages [(title, text)], questions [{question, answer, kind, support}])

The same shape as natural.generate. Written on 2026-12-02 by seven writers who had not seen
Engram's recall code, in three batches: 36 questions (films and music; books, science and
business; sports, places and politics), 24 (history, art and food; technology, transport and
television: these writers were also told that Wikipedia opens a person's passage with the full
formal name while other passages use the short one), and 24 (nature, science and medicine;
music, theatre, comics, college sport and politics). Each batch was measured before any change
it prompted (README, Benchmarks). Paragraphs are Wikipedia-style intros about real entities
from general knowledge (a fact may be imprecise); questions are phrased as HotpotQA's are, often
naming the first entity only by description ("the 1980 novel about murders in a medieval
monastery"). Each bridge answer occurs in the second supporting passage only, no answer occurs
in a distractor of its own question (checked by `python bench/corpus/hotpot.py`).

The data: hotpot_groups.jsonl beside this module, one question a line with its 10 passages.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _groups() -> list[dict]:
    with open(HERE / "hotpot_groups.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


GROUPS = _groups()


def generate(seed: int = 0) -> tuple[list[tuple[str, str]], list[dict]]:
    """Every distinct passage once, in an order shuffled by `seed`, and the questions."""
    passages = list(dict.fromkeys((p["title"], p["text"]) for g in GROUPS for p in g["passages"]))
    random.Random(seed).shuffle(passages)
    questions = [{k: g[k] for k in ("question", "answer", "kind")} | {"support": list(g["support"])}
                 for g in GROUPS]
    return passages, questions


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def check() -> list[str]:
    """Problems: a title with two texts, a group without 10 passages or its supports, a bridge
    answer outside its second passage, an answer in one of its group's distractors."""
    problems, texts = [], {}
    for g in GROUPS:
        q = g["question"]
        own = {p["title"]: p["text"] for p in g["passages"]}
        for title, text in own.items():
            if texts.setdefault(title, text) != text:
                problems.append(f"{title!r} has two texts")
        if len(g["passages"]) != 10 or any(s not in own for s in g["support"]):
            problems.append(f"{q}: not 10 passages with both supports")
            continue
        want = f" {_norm(g['answer'])} "
        holders = [s for s in g["support"] if want in f" {_norm(own[s])} "]
        if g["kind"] == "bridge" and holders != [g["support"][1]]:
            problems.append(f"{q}: answer in {holders}")
        if g["kind"] == "comparison" and not holders:
            problems.append(f"{q}: answer in neither passage")
        leaks = [t for t, x in own.items() if t not in g["support"] and want in f" {_norm(x)} "]
        if leaks:
            problems.append(f"{q}: answer also in {leaks}")
    return problems


if __name__ == "__main__":
    passages, questions = generate()
    kinds: dict[str, int] = {}
    for q in questions:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    print(f"{len(passages)} passages, {len(questions)} questions {kinds}")
    for problem in check():
        print("PROBLEM:", problem)
