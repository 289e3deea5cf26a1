"""Turn windows: a conversation chunk is also embedded as every run of 2 and of 3 consecutive
turns, so the dense lane can find the exchange a question is about inside a chunk of ten.

A chunk's one vector averages all its turns: a question about one exchange ("When did Leah
sign up for the run?") sits far from a chunk where that exchange is two lines of twelve. The
dense lane scores a conversation chunk by its windows instead: the mean over the widths of the
best window of each width (`window_similarity`). Windows hold no text of their own, only their
chunk, width, first turn and vector: their text is the chunk's lines `start .. start + width`.
Chunks that are not conversations, and a chunk of one turn, have no windows (their own vector
is their only one). What the windows gained on the bench's conversations: bench/NOTES.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engram.pipelines.ids import window_id

WIDTHS = (2, 3)  # turns per window


@dataclass(frozen=True)
class Window:
    id: uuid.UUID
    chunk_id: uuid.UUID
    width: int
    start: int  # the chunk's line (turn) the window starts at
    text: str


def spans(chunk: Mapping[str, Any]) -> list[tuple[int, int, str]]:
    """(width, start, text) of a chunk row's windows: none unless it is a conversation's chunk
    of two or more turns. A chunk of fewer turns than a width has one window of that width, the
    whole chunk, so every width scores every chunk."""
    if not chunk.get("conversation"):
        return []
    lines = [line for line in chunk["text"].split("\n") if line.strip()]
    if len(lines) < 2:
        return []
    return [(width, start, "\n".join(lines[start:start + width]))
            for width in WIDTHS for start in range(max(1, len(lines) - width + 1))]


def turn_windows(chunk: Mapping[str, Any]) -> list[Window]:
    """The windows of a chunk row that has its `id`."""
    return [Window(window_id(chunk["id"], width, start), chunk["id"], width, start, text)
            for width, start, text in spans(chunk)]


def windows_of(chunks: Iterable[Mapping[str, Any]]) -> list[Window]:
    return [w for c in chunks for w in turn_windows(c)]
