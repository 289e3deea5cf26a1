"""The add stage's pure part: decode, classify and validate every item before anything is written."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from engram.pipelines import ids
from engram.pipelines.cognify.classify import classify, validate_content
from engram.pipelines.cognify.conversation import CONVERSATION, NAME, Conversation, Turn, parse, transcript
from engram.pipelines.errors import BadInput


@dataclass(frozen=True)
class PreparedItem:
    name: str | None
    mime: str | None
    source: str | None
    doc_type: str
    digest: str
    text: str


def prepare(item, max_bytes: int, position: int) -> PreparedItem:
    """Raise BadInput with the item's position and name when it cannot be remembered."""
    label = f"item {position}" + (f" ({item.name})" if item.name else "")
    if item.turns is not None:
        text = _conversation_text(item, label)
        data = text.encode("utf-8")
        if len(data) > max_bytes:
            raise BadInput(f"{label}: {len(data):,} bytes of transcript is over the limit of {max_bytes:,} bytes "
                           f"(ENGRAM_MAX_CONTENT_BYTES)")
        return PreparedItem(item.name, item.mime, item.source, CONVERSATION, ids.content_hash(data), text)
    if item.text is not None:
        try:
            data = item.text.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates from a bad decoder upstream
            raise BadInput(f"{label}: text is not valid Unicode ({exc.reason} at {exc.start})") from None
    else:
        try:
            data = base64.b64decode(item.content_b64, validate=True)
        except (binascii.Error, ValueError):
            raise BadInput(f"{label}: content_b64 is not valid base64") from None
    if len(data) > max_bytes:
        raise BadInput(f"{label}: {len(data):,} bytes is over the limit of {max_bytes:,} bytes (ENGRAM_MAX_CONTENT_BYTES)")
    doc_type = classify(item.name, item.mime, data)
    try:
        text = validate_content(data, doc_type, max_bytes)
    except BadInput as exc:
        raise BadInput(f"{label}: {exc}") from None
    return PreparedItem(item.name, item.mime, item.source, doc_type, ids.content_hash(data), text)


def _conversation_text(item, label: str) -> str:
    """The turns as the canonical transcript (what is stored, hashed and forgotten)."""
    turns = []
    for i, turn in enumerate(item.turns):
        speaker = " ".join(turn.speaker.split())
        if not re.fullmatch(NAME, speaker):
            raise BadInput(f"{label}: turn {i}: speaker {turn.speaker!r} is not a name of 1-3 words "
                           f"starting with a letter (no ':')")
        if not turn.text.strip():
            raise BadInput(f"{label}: turn {i}: text is blank")
        turns.append(Turn(speaker, turn.text, turn.at, turn.id))
    text = transcript(Conversation(turns, item.started_at))
    parsed = parse(text)
    if parsed is None or len(parsed.turns) != len(turns):  # the stored form must read back as these turns
        raise BadInput(f"{label}: the turns do not form a transcript Engram can read back")
    return text
