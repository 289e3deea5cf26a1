"""Chat transcripts for the offline extractor: turns, header lines, first person, relation heads.

A chunk of a conversation is one `Speaker: text` line per turn (a date header line may open a
session). The speakers are its participants; "I" in a turn is its speaker and "you" the other
speaker when there are exactly two. A capitalised word is an entity here only with evidence
(chat capitalises every greeting and filler that opens a turn). Builds on the prose rules of
adapters/llm/offline.py, which hands a chat chunk to chat_graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.adapters.llm.offline import Graph, link_mentions, node_for
from engram.adapters.llm.offline_mentions import Mention, find_mentions, split_sentences, trim_run
from engram.adapters.llm.offline_words import (
    CLAUSE_WORDS,
    COMMON_ENDINGS,
    CONTRACTION_ENDINGS,
    FILLER_PHRASES,
    FIRST_NAMES,
    INTERJECTIONS,
    LABELS,
    LONE_FILLERS,
    MONTHS,
    FINITE_VERBS,
    NOT_VERBS,
    RELATION_LEADERS,
    RELATION_STOP,
    ROLES,
    SENTENCE_STOP,
    SUBJECT_ADVERBS,
    VERBS,
    WEEKDAYS,
)
from engram.models.graph import KnowledgeGraph

MAX_CHAT_RELATION_WORDS = 4
# A speaker: one to three words, no digit first, no ':' ("Caroline", "Mary Ann", "leah"); a turn
# may open with its own "[id time]" tag.
_SPEAKER = r"[^\W\d_][\w.'\u2019-]*(?: [^\W\d_][\w.'\u2019-]*){0,2}"
_TURN = re.compile(rf"^\s*(?:\[[^\]\n]{{1,120}}\]\s*)?({_SPEAKER})\s*:[ \t]+(\S.*)$")
# Everything a date/time header line may hold: "1:56 pm on 8 May, 2023", "Session 3 - 8 May 2023",
# "2023-02-04T19:31:00", "Monday, 8th May".
_HEADER_TOKEN = re.compile(
    r"(?<![^\W\d_])(?:\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?|\d+(?:st|nd|rd|th)?|[\d:.]+|[ap]\.?m\.?"
    r"|on|at|of|the|session|date|time|utc|gmt|"
    + "|".join(sorted(WEEKDAYS | MONTHS, key=len, reverse=True)) + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"(?<![\w'\u2019])([Ii]['\u2019](?:m|ve|ll|d)|[Ii]|[Mm]y|[Yy]ou['\u2019](?:re|ve|ll|d)|[Yy]our|[Yy]ou)"
    r"(?![\w'\u2019])"
)
# A capitalised word after a lower-case word ("saw Tala", "to Leeds"): written as a name.
_AFTER_LOWER = re.compile(r"(?:^|\s)[a-z][\w'\u2019]*[,;]? ([A-Z][\w&\-]+)")
_LOWER_WORD = re.compile(r"(?<![\w'\u2019])[a-z][\w'\u2019]*")
_GERUND_ENDINGS = ("ing", "ment", "tion", "sion", "ness")  # "Fundraising went", "Payment was": no subject names
_REPEATED = re.compile(r"(\w)\1\1")
_BARE_NUMBER = re.compile(r"[\d,.]+")
_EXPANSION = {"m": " is", "ve": " has", "ll": " will", "d": " would", "re": " is"}


def is_header_line(line: str) -> bool:
    """A line that only dates a session ("1:56 pm on 8 May, 2023", an ISO date): no facts in it."""
    rest = _HEADER_TOKEN.sub(" ", line)
    return bool(re.search(r"\d", line)) and not re.search(r"[^\W\d_]", rest)


def chat_turns(lines: list[str]) -> list[tuple[str | None, str]] | None:
    """The turns of a chat chunk as (speaker, text), or None when the text is not a chat: at least
    two `Name: text` lines that are most of its lines (someone speaks twice when there are more than
    two; no field label), or one such line alone that speaks in the first person (a long turn's
    piece). A line without a speaker continues the turn above it."""
    matches = [_TURN.match(line) for line in lines]
    speakers = [m.group(1) for m in matches if m]
    if len(speakers) * 2 < len(lines) or not speakers or any(s.lower() in LABELS for s in speakers):
        return None
    if len(speakers) == 1 and (len(lines) > 1 or not _speaks(speakers[0], matches[0].group(2))):
        return None
    if len(speakers) > 2 and len(set(speakers)) == len(speakers):
        return None  # "Task: ...", "Result: ...", "Owner: ...": fields, each once, not turns
    turns: list[tuple[str | None, str]] = []
    for line, match in zip(lines, matches, strict=True):
        if match:
            turns.append((match.group(1), match.group(2)))
        elif turns:
            turns[-1] = (turns[-1][0], f"{turns[-1][1]} {line.strip()}")
        else:
            turns.append((None, line.strip()))
    return turns


def chat_graph(turns: list[tuple[str | None, str]]) -> KnowledgeGraph:
    """One person node per speaker, then each turn's sentences with the speaker's first person."""
    graph = Graph()
    speakers = list(dict.fromkeys(speaker for speaker, _ in turns if speaker))
    for speaker in speakers:
        node_for(graph.nodes, graph.ordered, Mention(speaker, "person", 0, len(speaker)),
                  f"{speaker}, a participant in the conversation")
    texts = [" ".join(text.split()) for _, text in turns]
    seen = _Seen(
        inner={word for text in texts for word in _AFTER_LOWER.findall(text)},
        lower={w.lower() for text in texts for w in _LOWER_WORD.findall(text)},
        speakers={s.lower() for s in speakers},
    )
    for (speaker, _), text in zip(turns, texts, strict=True):
        other = next((s for s in speakers if s != speaker), None) if speaker and len(speakers) == 2 else None
        for original in split_sentences(text):
            sentence, people = first_person(original, speaker, other)
            trimmed = (_trim_filler(sentence, m, seen) for m in find_mentions(sentence, people))
            mentions = [m for m in trimmed if m and _keep_in_chat(m, sentence, seen)]
            said = f"{speaker}: {original}" if speaker else original
            link_mentions(graph, sentence, mentions, description=said, relate=chat_relationship)
    return graph.result()


@dataclass
class _Seen:
    inner: set[str]  # capitalised after a lower-case word somewhere in the chunk
    lower: set[str]  # written lower-case somewhere in the chunk
    speakers: set[str]

    def named(self, word: str) -> bool:
        """Evidence that a capitalised word is a name."""
        low = word.lower()
        return low in self.speakers or low in FIRST_NAMES or (word in self.inner and not is_filler(word))


def _trim_filler(sentence: str, mention: Mention, seen: _Seen) -> Mention | None:
    """"Hey Caroline", "Happy Birthday Leah", "Thanks Ines" -> the name; "Did Leah" at a
    sentence's start -> "Leah"."""
    if mention.type == "date" or mention.name.lower() in seen.speakers:
        return mention
    words = mention.name.split(" ")
    at_start = _at_start(sentence, mention)
    drop = 0
    while drop < len(words):
        pair = "_".join(w.lower() for w in words[drop : drop + 2])
        low = words[drop].lower()
        if pair in FILLER_PHRASES:
            drop += 2
        elif low in INTERJECTIONS or low.endswith(CONTRACTION_ENDINGS) \
                or (at_start and (low in SENTENCE_STOP or low in RELATION_STOP or low in VERBS)):
            drop += 1  # "Is Rory", "And Mum", "Tell Ailsa" opening a sentence
        else:
            break
    if at_start and drop == 0 and len(words) == 2 and seen.named(words[1]) and not seen.named(words[0]):
        drop = 1
    if drop == 0:
        return mention
    if drop >= len(words):
        return None
    start = mention.start + sum(len(w) + 1 for w in words[:drop])
    return trim_run(sentence, start, mention.end)


def _keep_in_chat(mention: Mention, sentence: str, seen: _Seen) -> bool:
    """A chat mention is an entity only with evidence: a capitalised word opening a sentence is
    a name when it is a speaker or known first name, recurs capitalised mid-sentence, is a
    possessive or is followed by a verb names take ("Tala says")."""
    name = mention.name
    if mention.type == "date":
        return not _BARE_NUMBER.fullmatch(name)  # "2023" alone is no entity in chat
    words = name.split(" ")
    if name.lower() in seen.speakers:
        return True
    if all(is_filler(w) for w in words) or _BARE_NUMBER.fullmatch(name):
        return False
    if name.isupper() and len(name) > 1:
        # Shouting ("PUB IS AT THE END", "NOOO"), unless an acronym the chat never writes in lower case.
        return len(words) == 1 and len(name) <= 5 and name.lower() not in seen.lower \
            and not _REPEATED.search(name)
    if len(words) > 1 or not _at_start(sentence, mention):
        return True
    possessive = sentence[mention.end : mention.end + 2] in ("'s", "\u2019s")
    return seen.named(name) or mention.type == "person" \
        or (possessive and not name.lower().endswith(COMMON_ENDINGS)) \
        or (name.lower() not in seen.lower and not name.lower().endswith(_GERUND_ENDINGS)
            and _subject(sentence[mention.end :], seen))


def _subject(after: str, seen: _Seen) -> bool:
    """The words after a sentence's first word make it a subject: a finite verb ("Tala says",
    "Pickle also learned") or "and" a speaker ("Carmen and I", read "Carmen and Leah")."""
    words = [w.strip(",.!?;:") for w in after.split()[:3]]
    if words[:1] == ["and"]:
        return len(words) > 1 and words[1].lower() in seen.speakers
    if words and (words[0].lower() in SUBJECT_ADVERBS or words[0].endswith("ly")):
        words = words[1:]
    if not words or not words[0].islower():
        return False
    verb = words[0]
    return verb in FINITE_VERBS or (verb.endswith("ed") and _is_verb(verb)) \
        or (verb.endswith("s") and verb not in NOT_VERBS and _is_verb(verb))


def _at_start(sentence: str, mention: Mention) -> bool:
    """Nothing but punctuation or emoji before the mention in its sentence."""
    return not any(c.isalnum() for c in sentence[: mention.start])


def _speaks(speaker: str, text: str) -> bool:
    """"Caroline: I adopted a dog" is a turn; "Note: the film ..." a label."""
    return speaker.lower() not in LABELS and not is_filler(speaker) and bool(_FIRST_PERSON.search(text))


def first_person(
    sentence: str, speaker: str | None, other: str | None
) -> tuple[str, list[tuple[int, int, str]]]:
    """The sentence with "I"/"my" as the speaker and "you"/"your" as the other speaker (for
    extraction only), and the spans where each name now stands."""
    out: list[str] = []
    spans: list[tuple[int, int, str]] = []
    pos = 0
    length = 0
    for match in _FIRST_PERSON.finditer(sentence):
        word = match.group(1).replace("\u2019", "'")
        name = speaker if word[0] in "IiMm" else other
        if not name:
            continue
        head, _, tail = word.partition("'")
        piece = sentence[pos : match.start()]
        out.append(piece)
        length += len(piece)
        spans.append((length, length + len(name), name))
        rest = "'s" if head.lower() in ("my", "your") else _EXPANSION.get(tail, "")
        out.append(name + rest)
        length += len(name) + len(rest)
        pos = match.end()
    out.append(sentence[pos:])
    return "".join(out), spans


def is_filler(word: str) -> bool:
    """A word that is no entity alone in chat: a greeting, interjection, filler, contraction,
    weekday or month name."""
    low = word.lower().replace("\u2019", "'").strip(".!?,")
    return low in INTERJECTIONS or low in LONE_FILLERS or low in RELATION_STOP \
        or low.removesuffix("s") in WEEKDAYS or low in MONTHS \
        or low in SENTENCE_STOP or low.endswith(CONTRACTION_ENDINGS) or not any(c.isalpha() for c in low)


def chat_relationship(name: str) -> str:
    """A relation name a chat fact may carry: a short verb phrase ("adopted", "went_to",
    "going_to"), else the unspecific related_to."""
    if name == "related_to":
        return name
    words = name.split("_")
    while words and words[0] in RELATION_LEADERS:
        words = words[1:]
    negated = words[:1] in (["not"], ["never"])
    head = words[1:2] if negated else words[:1]
    if not head or len(words) > MAX_CHAT_RELATION_WORDS or not CLAUSE_WORDS.isdisjoint(words):
        return "related_to"
    if _is_verb(head[0]) or (len(words) == 2 and words[0] in ROLES and words[1] == "of"):
        return "_".join(words)
    return "related_to"


def _is_verb(word: str) -> bool:
    if word in VERBS:
        return True
    if word in NOT_VERBS or len(word) < 4:
        return False
    if word.endswith(("ed", "ing")):
        return True
    return word.endswith("s") and (word[:-1] in VERBS or (word.endswith("es") and word[:-2] in VERBS))
