"""A company knowledge base: short policy and how-to pages full of numbers, thresholds and dates,
with near-duplicates (managers vs directors, one country's per diem vs another's, the superseded
policy beside the current one), and the questions employees type ("When is payroll paid?", "Who
approves expenses above 1000 euros?"), many of them "When does ...?" with no date in them.

    generate(seed) -> (documents [(title, text)], questions [{question, answer, kind, support}])

Written on 2026-12-05 by a writer who had not seen Engram's code (kb.json beside this module).
Each answer occurs in its evidence pages and in no other page (checked by
`python bench/corpus/kb.py`). The seed only shuffles document order.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = json.loads((HERE / "kb.json").read_text(encoding="utf-8"))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def generate(seed: int = 0) -> tuple[list[tuple[str, str]], list[dict]]:
    titles = {d["id"]: d["title"] for d in DATA["documents"]}
    documents = [(d["title"], d["text"]) for d in DATA["documents"]]
    random.Random(seed).shuffle(documents)
    questions = [{"question": q["question"], "answer": q["answer"], "kind": q["kind"],
                  "support": [titles[e] for e in q["evidence"]]} for q in DATA["questions"]]
    return documents, questions


def check() -> list[str]:
    """Problems: a repeated id or title, evidence naming no page, an answer missing from an
    evidence page or present in another page."""
    problems = []
    docs = {d["id"]: d for d in DATA["documents"]}
    if len(docs) != len(DATA["documents"]) or len({d["title"] for d in docs.values()}) != len(docs):
        problems.append("repeated document id or title")
    for q in DATA["questions"]:
        answer = f" {_norm(q['answer'])} "
        for e in q["evidence"]:
            if e not in docs:
                problems.append(f"{q['question']!r}: no page {e}")
            elif answer not in f" {_norm(docs[e]['text'])} ":
                problems.append(f"{q['question']!r}: answer not in its page {e}")
        others = [i for i, d in docs.items() if i not in q["evidence"] and answer in f" {_norm(d['text'])} "]
        if others:
            problems.append(f"{q['question']!r}: answer also in {others}")
    return problems


if __name__ == "__main__":
    docs, asked = generate()
    print(f"{len(docs)} pages, {len(asked)} questions")
    print("\n".join(check()) or "sound")
