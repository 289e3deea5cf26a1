"""Multi-session conversations between two people (LoCoMo-style): the recall set for chat memory.

    generate(seed) -> (documents [(title, transcript, conversation)],
                       questions [{question, answer, kind, evidence, group}])

Each conversation (conversations/*.json beside this module) has 16-19 dated sessions of 12-22
turns over 5-10 months: greetings, fillers, photos described in brackets, relative time
("yesterday", "two weekends ago") and facts that change. Every session is one document, written
the natural way a user would remember it: a header line with the session's date and time, then
one `Speaker: text` line per turn. Each conversation is one user's memory (its own dataset, as
GROUPED says), asked only its own questions. Questions come in four categories (single-hop, multi-hop,
temporal, open-domain) with the turns that hold their evidence; `evidence` here is those turns'
texts (without the speaker), and a question scores by evidence recall (the share of its evidence turns whose text lies
inside a returned item or its source chunk).

Written on 2026-12-05 by four writers who had not seen Engram's code, two conversations each
(checked by `python bench/corpus/conversations.py`). The seed only shuffles document order.
"""

from __future__ import annotations

import json
import random
import re
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent / "conversations"
GROUPED = True  # documents and questions name their conversation: one dataset each
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain")


def conversations(names: list[str] | None = None) -> list[dict]:
    files = sorted(HERE.glob("*.json"))
    found = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    return [c for c in found if names is None or c["id"] in names]


def header(started_at: str) -> str:
    """The session's date and time as chat exports write it: "1:56 pm on 8 May, 2023"."""
    at = datetime.fromisoformat(started_at)
    hour = at.hour % 12 or 12
    return f"{hour}:{at.minute:02d} {'am' if at.hour < 12 else 'pm'} on {at.day} {at.strftime('%B')}, {at.year}"


def transcript(session: dict) -> str:
    lines = [header(session["started_at"])]
    lines += [f"{t['speaker']}: {' '.join(t['text'].split())}" for t in session["turns"]]
    return "\n".join(lines)


def generate(seed: int = 0, names: list[str] | None = None) -> tuple[list[tuple[str, str]], list[dict]]:
    documents, questions = [], []
    for conv in conversations(names):
        turns = {}
        for session in conv["sessions"]:
            documents.append((f"{conv['id']} session {session['session']}", transcript(session), conv["id"]))
            turns.update({t["id"]: " ".join(t["text"].split()) for t in session["turns"]})
        for q in conv["questions"]:
            questions.append({"question": q["question"], "answer": q["answer"], "kind": q["category"],
                              "evidence": [turns[e] for e in q["evidence"]], "group": conv["id"]})
    random.Random(seed).shuffle(documents)
    return documents, questions


def check() -> list[str]:
    """Problems: too few sessions or questions, a malformed or repeated turn id, evidence naming no
    turn, an unknown category, a speaker outside the pair, sessions out of date order."""
    problems = []
    convs = conversations()
    if len(convs) < 8:
        problems.append(f"{len(convs)} conversations, want at least 8")
    for conv in convs:
        cid, ids = conv["id"], set()
        if len(conv["sessions"]) < 15:
            problems.append(f"{cid}: {len(conv['sessions'])} sessions, want at least 15")
        previous = None
        for session in conv["sessions"]:
            at = datetime.fromisoformat(session["started_at"])
            if previous and at <= previous:
                problems.append(f"{cid} session {session['session']}: not after the session before")
            previous = at
            for turn in session["turns"]:
                if not re.fullmatch(rf"S{session['session']}:\d+", turn["id"]) or turn["id"] in ids:
                    problems.append(f"{cid}: bad or repeated turn id {turn['id']}")
                ids.add(turn["id"])
                if turn["speaker"] not in conv["speakers"]:
                    problems.append(f"{cid} {turn['id']}: speaker {turn['speaker']!r} is not one of the pair")
        for q in conv["questions"]:
            if q["category"] not in CATEGORIES:
                problems.append(f"{cid}: unknown category {q['category']!r}")
            missing = [e for e in q["evidence"] if e not in ids]
            if missing or not q["evidence"]:
                problems.append(f"{cid}: {q['question']!r} names no or unknown evidence {missing}")
    return problems


if __name__ == "__main__":
    docs, asked = generate()
    print(f"{len(docs)} sessions, {len(asked)} questions;",
          ", ".join(f"{c} {sum(q['kind'] == c for q in asked)}" for c in CATEGORIES))
    print("\n".join(check()) or "sound")
