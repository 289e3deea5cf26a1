"""Conversations: turns of speakers in a session. Pure.

A conversation is stored as a transcript: an optional header line with the session's date, then
one `Speaker: text` line per turn; a turn with its own time or id opens with `[id time]`:

    2023-05-08T13:56:00+00:00
    Caroline: I went to the support group yesterday.
    [D1:2 2023-05-08T14:02:00+00:00] Melanie: That's great!

A plain text whose lines are mostly `Name: text` (under an optional date header such as
"Session 3, 8 May 2023, 1:56 pm") is read the same way. Chunks hold whole turns and no header;
each carries its session's date, its speakers and the absolute dates of its relative phrases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from engram.pipelines.cognify.chunk import chunk_text, count_words
from engram.pipelines.dates import utc
from engram.pipelines.relative_dates import resolve_all

CONVERSATION = "conversation"
TURN_END = "turn_end"
TURN_CUT = "turn_cut"  # a turn longer than the limit, cut inside; the next chunk continues it
END = "end"

NAME = r"[^\W\d_][\w.'\u2019-]*(?: [^\W\d_][\w.'\u2019-]*){0,2}"  # a speaker: 1-3 words, no ':'
_SPEAKER = re.compile(rf"^(?:\[(?P<tag>[^\]\n]{{1,120}})\]\s*)?(?P<speaker>{NAME}):[ \t]+(?P<text>\S.*)$")
_LABEL = re.compile(r"^\s*(?:session|conversation|chat|date|dialogue|transcript)\b[^,:]*[,:]?\s*", re.I)
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")
MIN_TURNS = 2
TURN_SHARE = 0.6  # of the non-blank lines after a header, how many must be turns
MAX_SPEAKERS = 12


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    at: datetime | None = None
    id: str | None = None


@dataclass(frozen=True)
class Conversation:
    turns: list[Turn]
    started_at: datetime | None = None

    @property
    def participants(self) -> list[str]:
        return list(dict.fromkeys(t.speaker for t in self.turns))


@dataclass(frozen=True)
class ConversationChunk:
    index: int
    text: str
    token_count: int
    cut_type: str
    occurred_at: datetime | None
    speakers: list[str]
    dates: list[dict]  # {"phrase", "start", "end", "turn"}: resolved relative phrases
    conversation: dict = field(default_factory=dict)  # participants, turns (ids), continued


def transcript(conversation: Conversation) -> str:
    """The canonical stored form: header with the session's date, then one line per turn."""
    lines = [utc(conversation.started_at).isoformat()] if conversation.started_at else []
    for turn in conversation.turns:
        tag = " ".join(p for p in (turn.id, utc(turn.at).isoformat() if turn.at else None) if p)
        text = " ".join(turn.text.split())
        lines.append((f"[{tag}] " if tag else "") + f"{turn.speaker}: {text}")
    return "\n".join(lines)


def parse(text: str) -> Conversation | None:
    """The transcript's turns and session date; None when the text does not read as one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    started_at = None
    if len(lines) > 1 and not _SPEAKER.match(lines[0]) and _SPEAKER.match(lines[1]):
        started_at = header_date(lines[0])
        if started_at is not None:
            lines = lines[1:]
    if not lines or not _SPEAKER.match(lines[0]):
        return None  # text before the first turn would be lost
    turns: list[Turn] = []
    matched = 0
    for line in lines:
        m = _SPEAKER.match(line)
        if m is None:
            if turns:  # a wrapped line continues the turn above it
                last = turns[-1]
                turns[-1] = Turn(last.speaker, f"{last.text} {line}", last.at, last.id)
            continue
        matched += 1
        turn_id, at = _tag(m.group("tag"))
        turns.append(Turn(m.group("speaker"), m.group("text").strip(), at, turn_id))
    if matched < TURN_SHARE * len(lines):
        return None
    if len({t.speaker for t in turns}) > MAX_SPEAKERS:
        return None
    return Conversation(turns, started_at)


def looks_like_transcript(text: str) -> bool:
    """A plain text read as a conversation: turns under a date header, or speakers who come back
    (a list of "key: value" lines names each key once)."""
    conversation = parse(text)
    if conversation is None or len(conversation.turns) < MIN_TURNS:
        return False
    return conversation.started_at is not None or len(conversation.participants) < len(conversation.turns)


def header_date(line: str) -> datetime | None:
    """The date of a header line ("2023-05-08", "Session 3, 8 May 2023, 1:56 pm"), UTC."""
    line = line.strip().strip("#*=- ").strip()
    if not line or len(line) > 120:
        return None
    try:
        return utc(datetime.fromisoformat(line))
    except ValueError:
        pass
    if not _YEAR.search(line):
        return None  # dateparser reads "Chapter 3" as a day of this month
    import dateparser  # imported here: loading its language data costs a second

    found = dateparser.parse(_LABEL.sub("", line), languages=["en"], settings={"RETURN_AS_TIMEZONE_AWARE": False})
    return None if found is None else utc(found)


def _tag(tag: str | None) -> tuple[str | None, datetime | None]:
    if not tag:
        return None, None
    turn_id, at = [], None
    for part in tag.split():
        try:
            at = utc(datetime.fromisoformat(part))
        except ValueError:
            turn_id.append(part)
    return " ".join(turn_id) or None, at


def chunk_conversation(conversation: Conversation, max_chunk_tokens: int,
                       count_tokens: Callable[[str], int] | None = None) -> list[ConversationChunk]:
    """Whole turns packed into chunks of at most max_chunk_tokens; only a turn longer than the
    limit is cut (at sentences, then words) and continued in the next chunk."""
    if max_chunk_tokens < 1:
        raise ValueError(f"max_chunk_tokens must be at least 1, got {max_chunk_tokens}")
    counter = count_tokens or count_words
    pieces = [p for position, turn in enumerate(conversation.turns)
              for p in _pieces(turn, position, max_chunk_tokens, counter)]
    groups: list[list[_Piece]] = []
    for piece in pieces:
        if groups and counter("\n".join(p.line for p in [*groups[-1], piece])) <= max_chunk_tokens:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return [_chunk(i, group, conversation, counter, i == len(groups) - 1) for i, group in enumerate(groups)]


@dataclass(frozen=True)
class _Piece:
    turn: Turn
    turn_id: str
    line: str
    cut: bool  # the turn goes on in the next piece
    continued: bool  # this piece goes on from the one before


def _pieces(turn: Turn, position: int, limit: int, counter: Callable[[str], int]) -> list[_Piece]:
    turn_id = turn.id or str(position + 1)
    line = f"{turn.speaker}: {turn.text}"
    if counter(line) <= limit:
        return [_Piece(turn, turn_id, line, False, False)]
    room = max(1, limit - counter(f"{turn.speaker}:"))
    parts = chunk_text(turn.text, room, counter)
    return [_Piece(turn, turn_id, f"{turn.speaker}: {p.text}", i < len(parts) - 1, i > 0)
            for i, p in enumerate(parts)]


def _chunk(index: int, group: list[_Piece], conversation: Conversation, counter: Callable[[str], int],
           last: bool) -> ConversationChunk:
    text = "\n".join(p.line for p in group)
    dates, seen = [], set()
    for piece in group:
        base = piece.turn.at or conversation.started_at
        for resolved in resolve_all(piece.line.split(": ", 1)[1], base):
            key = (resolved.phrase.lower(), resolved.start, piece.turn_id)
            if key not in seen:
                seen.add(key)
                dates.append(dict(resolved.as_dict(), turn=piece.turn_id))
    cut = END if last else (TURN_CUT if group[-1].cut else TURN_END)
    occurred = conversation.started_at or group[0].turn.at
    meta = {"participants": conversation.participants, "turns": list(dict.fromkeys(p.turn_id for p in group)),
            "turn_speakers": [p.turn.speaker for p in group], "continued": group[0].continued}
    return ConversationChunk(index, text, counter(text), cut, occurred,
                             list(dict.fromkeys(p.turn.speaker for p in group)), dates, meta)


def conversation_chunk_row(chunk: ConversationChunk) -> dict:
    """A chunk as the chunk stage persists it (JSON): the load writes the conversation columns."""
    return {"index": chunk.index, "text": chunk.text, "token_count": chunk.token_count, "cut_type": chunk.cut_type,
            "occurred_at": chunk.occurred_at.isoformat() if chunk.occurred_at else None,
            "speakers": chunk.speakers, "dates": chunk.dates, "conversation": chunk.conversation}


def conversation_title(text: str) -> str:
    """"Conversation of 8 May 2023: Caroline, Melanie" (the header is a date, not a title)."""
    conversation = parse(text)
    if conversation is None:
        return text.strip().splitlines()[0][:200]
    names = ", ".join(conversation.participants[:4]) + (", ..." if len(conversation.participants) > 4 else "")
    started = conversation.started_at or next((t.at for t in conversation.turns if t.at), None)
    on = f" of {started.day} {started:%B %Y}" if started else ""
    return f"Conversation{on}: {names}"[:200]
