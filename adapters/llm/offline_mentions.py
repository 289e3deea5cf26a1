"""Finding names in a sentence for the offline extractor (adapters/llm/offline.py) and its
chat reader (offline_chat.py): sentences split, dates, quoted titles and capitalised runs found,
trimmed of stop words and titles, and given a guessed type."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.adapters.llm.offline_words import (
    COMMON_ENDINGS,
    CONNECTORS,
    FIRST_NAMES,
    HONORIFICS,
    OPENING_PARTICIPLES,
    ORG_HINTS,
    ORG_PREFIXES,
    ORG_SUFFIXES,
    ORG_VERBS,
    PERSON_VERBS,
    PLACE_PREPOSITIONS,
    PLACE_SUFFIXES,
    ROLES,
    SENTENCE_ABBREVIATIONS,
    SENTENCE_STOP,
)

_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s+[^\sa-z]|\s*$)")
_DIGIT = re.compile(r"\d")
_OPENING = "\"'([{<\u201c\u2018*_` "
# A capitalised word: "AT&T", "O'Neil", "U.S", "co-op"; never swallows a possessive "'s".
_CAP_WORD = r"[A-Z\u00c0-\u00d6\u00d8-\u00de][\w&\-]*(?:[.'\u2019](?!s\b)[A-Za-z][\w&\-]*)*"
# These keep their full stop inside a name ("Dr. Jane Goodall", "Acme Inc.", "Philip K. Dick").
_DOTTED = r"(?:(?:(?<=\b[A-Z])|(?<=\bInc)|(?<=\bCorp)|(?<=\bLtd)|(?<=\bCo)|(?<=\bDr)|(?<=\bMr)|(?<=\bMrs)" \
    r"|(?<=\bMs)|(?<=\bProf)|(?<=\bSt)|(?<=\bJr)|(?<=\bSr))\.)"
# Capitalised words joined by single spaces, allowing up to two connectors inside
# ("Bank of England", "University of the Arts"); punctuation ends a run.
# A name's own number ends it: "Apollo 11", "Jaws 2", "Jaws 3-D", "Route 66" (never a year or a
# longer figure: "Apollo 1969" is a name and a date).
_NUMERAL = r"(?:\s\d{1,3}(?:-[A-Z])?(?![\d,.:/]\d|[\w\-]))?"
_NAME_RUN = re.compile(
    rf"(?<![\w&]){_CAP_WORD}{_DOTTED}?"
    rf"(?:\s(?:(?:of|de|du|da|di|van|von|der|del|la|le|the|y|&)\s){{0,2}}{_CAP_WORD}{_DOTTED}?)*{_NUMERAL}"
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE = re.compile(
    rf"\b(?:{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}\s+{_MONTH}\s+\d{{4}}|"
    rf"{_MONTH}\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|1[5-9]\d{{2}}|20\d{{2}})\b"
)
TRAILING_NUMERAL = re.compile(r"\s\d{1,3}(?:-[A-Z])?$")
_MONTH_WORD = re.compile(_MONTH + r"\.?")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{2,80})[\"\u201d]")
# A nickname quoted inside a full name is part of it: Bryan David "Butch" Vig, Earvin "Magic" Johnson
# (one surname after it, a generational suffix at most; leading stop words and titles are trimmed).
_NICKNAMED = re.compile(
    rf"(?<![\w&])({_CAP_WORD}(?: {_CAP_WORD}){{0,2}}) [\"\u201c]({_CAP_WORD}(?: {_CAP_WORD})?)[\"\u201d]"
    rf" ({_CAP_WORD}(?: (?:Jr|Sr|II|III|IV)\.?)?)(?![\w&]| [A-Z])"
)
_INNER_CAP = re.compile(r"(?<=[a-z,;] )([A-Z][\w&\-]+)")
MAX_TITLE_WORDS = 8
EDGE_PUNCT = "\"'()[]{}<>,;:.!?\u201c\u201d\u2018\u2019*_`"


@dataclass
class Mention:
    name: str
    type: str
    start: int
    end: int



def split_sentences(text: str) -> list[str]:
    out, pos = [], 0
    for match in _SENTENCE_END.finditer(text):
        words = text[pos : match.start()].split()
        last = words[-1].lstrip("(\"'") if words else ""
        if last.lower() in SENTENCE_ABBREVIATIONS or (len(last) == 1 and last.isupper()):
            continue  # "Dr. Jane", "Philip K. Dick": an abbreviation or an initial ends no sentence
        out.append(text[pos : match.end()].strip())
        pos = match.end()
    out.append(text[pos:].strip())
    return [s for s in out if s]


def inner_capitalised(text: str) -> set[str]:
    """Capitalised words seen after a lower-case word: names, not sentence openers."""
    return {m.group(1) for m in _INNER_CAP.finditer(text)}


def keep_mention(mention: Mention, sentence: str, inner: set[str]) -> bool:
    """A lone capitalised word opening a sentence that reads as a common word ("Released",
    "Reviewers") is a name only when the text capitalises it elsewhere too, it is a known first
    name, an acronym, or a possessive ("Springfield's")."""
    if mention.type == "date" or " " in mention.name or sentence[: mention.start].strip(_OPENING):
        return True
    word = mention.name
    if word.lower() in OPENING_PARTICIPLES:
        return False  # "Born in Cincinnati, he ..." ("Born This Way" is more than one word)
    return word in inner or word.lower() in FIRST_NAMES or (len(word) > 1 and word.isupper()) \
        or mention.type != "concept" or not word.lower().endswith(COMMON_ENDINGS) \
        or sentence[mention.end : mention.end + 2] in ("'s", "\u2019s")


def find_mentions(sentence: str, people: list[tuple[int, int, str]] = ()) -> list[Mention]:
    """Dates, then quoted titles, then capitalised word runs outside them, in order of appearance.
    people: spans known to name a person (a chat's speakers), and no part of a run around them."""
    found: list[Mention] = [Mention(name, "person", a, b) for a, b, name in people]
    taken: list[tuple[int, int]] = [(a, b) for a, b, _ in people]
    if _DIGIT.search(sentence):
        for match in _DATE.finditer(sentence):
            found.append(Mention(match.group(0), "date", match.start(), match.end()))
            taken.append(match.span())
    for match in _NICKNAMED.finditer(sentence):
        given = trim_run(sentence, *match.span(1))  # "When Earvin", "CEO Bryan": trimmed as any name
        if given and not any(a < match.end() and match.start() < b for a, b in taken):
            name = f"{given.name} {match.group(2)} {match.group(3)}"
            found.append(Mention(name, "person", given.start, match.end()))
            taken.append((given.start, match.end()))
    for match in _QUOTED.finditer(sentence):
        title = match.group(1).strip(" ,.")
        if title and title[0].isupper() and len(title.split()) <= MAX_TITLE_WORDS \
                and not any(a < match.end() and match.start() < b for a, b in taken):
            found.append(Mention(title, "work", match.start(1), match.start(1) + len(title)))
            taken.append(match.span())
    for match in _NAME_RUN.finditer(sentence):
        start, end = match.span()
        numeral = TRAILING_NUMERAL.search(match.group(0))
        if numeral and _MONTH_WORD.fullmatch(match.group(0)[: numeral.start()].rsplit(" ", 1)[-1]):
            end = start + numeral.start()  # "June 12" is a day, not a name
        if people:
            # "Did you" read as "Did Leah": the run is split around the speaker.
            runs = _outside(sentence, start, end, taken)
            found.extend(m for a, b in runs if (m := trim_run(sentence, a, b)))
            continue
        if taken and any(a < end and start < b for a, b in taken):
            continue  # "March" of "March 3, 2021" is part of the date
        mention = trim_run(sentence, start, end)
        if mention:
            found.append(mention)
    found.sort(key=lambda m: m.start)
    return found


def _outside(sentence: str, start: int, end: int, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of sentence[start:end] outside the spans, without their edge spaces."""
    parts, pos = [], start
    for a, b in sorted(spans):
        if a < end and pos < b:
            parts.append((pos, max(pos, a)))
            pos = max(pos, b)
    parts.append((pos, end))
    out = []
    for a, b in parts:
        text = sentence[a:b]
        if text.strip():
            out.append((a + len(text) - len(text.lstrip()), b - len(text) + len(text.rstrip())))
    return out


def trim_run(sentence: str, start: int, end: int) -> Mention | None:
    """Drop sentence-initial stop words, honorifics and role titles ("CEO of Acme" -> "Acme")."""
    words = sentence[start:end].split(" ")  # offline_graph leaves single spaces only
    lowered = [w.rstrip(".").lower() for w in words]
    at_start = not sentence[:start].strip(_OPENING)
    honorific = False
    drop = 0
    while drop < len(words):
        low = lowered[drop]
        if (at_start and low in SENTENCE_STOP) or low in ROLES or low in CONNECTORS \
                or low == "i":
            pass
        elif low in HONORIFICS:
            honorific = True
        else:
            break
        drop += 1
        at_start = False
    keep = len(words)
    while keep > drop and lowered[keep - 1] in CONNECTORS:
        keep -= 1
    if keep <= drop:
        return None
    start += sum(len(w) + 1 for w in words[:drop])
    end -= sum(len(w) + 1 for w in words[keep:])
    name = sentence[start:end].rstrip(".")
    kind = _guess_type(sentence, name, lowered[drop:keep], start, end, honorific)
    return Mention(name, kind, start, end)


def _guess_type(
    sentence: str, name: str, tokens: list[str], start: int, end: int, hon: bool
) -> str:
    if hon or (tokens[0] in FIRST_NAMES and len(tokens) <= 3):
        return "person"
    after = [w.strip(EDGE_PUNCT).lower() for w in sentence[end : end + 40].split(" ", 4)[:4]]
    after = [w for w in after if w][:3]
    if after and after[0] in PERSON_VERBS:
        return "person"
    window = sentence[max(0, start - 30) : start].split()[-2:]
    before = [w.strip(EDGE_PUNCT).lower() for w in window]
    before = [w for w in before if w]
    if tokens[-1] in ORG_SUFFIXES or tokens[0] in ORG_PREFIXES \
            or (len(name) >= 2 and name.replace("&", "").isalpha() and name.isupper()) \
            or (after and after[0] in ORG_VERBS) \
            or not ORG_HINTS.isdisjoint(after) or not ORG_HINTS.isdisjoint(before):
        return "organization"
    if tokens[-1] in PLACE_SUFFIXES or (before and before[-1] in PLACE_PREPOSITIONS):
        return "place"
    return "concept"
