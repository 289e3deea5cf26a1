"""A natural-text multi-hop corpus (HotpotQA-style): hand-written Wikipedia-style paragraphs about
real, well-known entities, two-hop "bridge" and "comparison" questions, and distractor passages
that share words with the questions (other films of a series, other people born somewhere, other
universities of the same city, ...). Distractors are shared between questions; all passages of all
questions form one pool.

    generate(seed) -> (passages [(title, text)], questions [{question, answer, kind, support}])

The same shape as multihop.generate. Every paragraph and every fact was written by hand from
general knowledge (no text was copied from Wikipedia; no data set was downloaded), so a fact may
be imprecise, but each answer string occurs literally in its supporting passage, and (checked by
`python bench/corpus/natural.py`) in no passage that is not a supporting passage of its question.

A bridge question names entity A; the passage about A names entity B (sometimes by an alias, as
Wikipedia does: "Mozart" for "Wolfgang Amadeus Mozart", "Moscow State University" for
"Lomonosov Moscow State University"); the answer is in the passage about B, which shares few
words with the question. A comparison question names two entities; the answer is one of them.
`seed` only shuffles the passage order.

The data sit beside this module: natural_passages.jsonl (one passage a line: topic, title, text;
the first sentence names the title subject) and natural_questions.jsonl (question, answer, kind,
support: the two supporting titles, the bridge passage first).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _lines(name: str) -> list[dict]:
    with open(HERE / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


PASSAGES: list[tuple[str, str]] = [(p["title"], p["text"]) for p in _lines("natural_passages.jsonl")]
QUESTIONS: list[dict] = _lines("natural_questions.jsonl")


def generate(seed: int = 0) -> tuple[list[tuple[str, str]], list[dict]]:
    """Every passage once, in an order shuffled by `seed`, and the questions (copies)."""
    passages = list(PASSAGES)
    random.Random(seed).shuffle(passages)
    return passages, [dict(q, support=list(q["support"])) for q in QUESTIONS]


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def check() -> list[str]:
    """Problems with the data: duplicate titles, unknown supports, an answer missing from its
    passage, a bridge answer already in the first passage, an answer in a non-supporting passage,
    a paragraph outside 50-150 words."""
    problems = []
    texts = dict(PASSAGES)
    if len(texts) != len(PASSAGES):
        problems.append("duplicate titles")
    for title, text in PASSAGES:
        words = len(text.split())
        if not 50 <= words <= 150:
            problems.append(f"{title}: {words} words")
    for q in QUESTIONS:
        want = f" {_norm(q['answer'])} "
        for title in q["support"]:
            if title not in texts:
                problems.append(f"{q['question']}: no passage {title!r}")
        if any(t not in texts for t in q["support"]):
            continue
        holders = [t for t in q["support"] if want in f" {_norm(texts[t])} "]
        if q["kind"] == "bridge" and holders != [q["support"][1]]:
            problems.append(f"{q['question']}: answer in {holders}")
        if q["kind"] == "comparison" and not holders:
            problems.append(f"{q['question']}: answer in neither passage")
        leaks = [t for t, x in PASSAGES if t not in q["support"] and want in f" {_norm(x)} "]
        if leaks:
            problems.append(f"{q['question']}: answer also in {leaks}")
    return problems


if __name__ == "__main__":
    passages, questions = generate()
    kinds = {}
    for q in questions:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    print(f"{len(passages)} passages, {len(questions)} questions {kinds}; "
          f"words per passage {min(len(t.split()) for _, t in passages)}-"
          f"{max(len(t.split()) for _, t in passages)}")
    for problem in check():
        print("PROBLEM:", problem)
