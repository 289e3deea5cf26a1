"""Chunk stage: sentences -> paragraphs -> chunks the embedder reads whole.

Chunks are measured in the embedder's own tokens, at most min(max_chunk_tokens, its window)
(`chunk_budget`), so no chunk's tail goes unembedded. Every chunk is a slice of the original
text (line breaks inside it survive, which matters for code and CSV rows), so joining the
chunks loses no character. A chunk prefers to end where a paragraph ends, then where a
sentence ends; only a sentence longer than the whole limit is cut between words, and only a
word longer than it (a URL, base64) between characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

PARAGRAPH_END = "paragraph_end"
SENTENCE_END = "sentence_end"
SENTENCE_CUT = "sentence_cut"
WORD_CUT = "word_cut"
END = "end"

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# A sentence ends at . ! ? (and closing quotes/brackets) before whitespace and a non-lower-case
# character; "e.g. this" stays one sentence.
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s+[^\sa-z]|\s*$)")
_WORD = re.compile(r"\S+")
# Abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc no fig e.g i.e u.s u.k".split()
)


@dataclass(frozen=True)
class ChunkDraft:
    index: int
    text: str
    token_count: int
    cut_type: str


@dataclass(frozen=True)
class _Unit:
    """A sentence (or a word-split piece of one) as a span of the source text."""

    start: int
    end: int
    tokens: int
    cut: str
    paragraph: int


class TokenWindow(Protocol):
    """What the chunker needs of an embedder: its window in content tokens and its counter."""

    max_tokens: int

    def count_tokens(self, text: str) -> int: ...


def count_words(text: str) -> int:
    """Default token counter: one word is one token."""
    return len(text.split())


def chunk_budget(max_chunk_tokens: int, embedder: TokenWindow) -> tuple[int, Callable[[str], int]]:
    """The one rule for the limit and counter chunks are cut with: the embedder's own tokens,
    at most `max_chunk_tokens` and never more than the embedder reads."""
    return min(max_chunk_tokens, embedder.max_tokens), embedder.count_tokens


def chunk_for_embedder(text: str, max_chunk_tokens: int, embedder: TokenWindow) -> list[ChunkDraft]:
    """The chunks the cognify chunk stage makes of `text` (benches and tests call this too)."""
    limit, counter = chunk_budget(max_chunk_tokens, embedder)
    return chunk_text(text, limit, counter)


def chunk_text(
    text: str,
    max_chunk_tokens: int,
    count_tokens: Callable[[str], int] | None = None,
) -> list[ChunkDraft]:
    if max_chunk_tokens < 1:
        raise ValueError(f"max_chunk_tokens must be at least 1, got {max_chunk_tokens}")
    counter = count_tokens or count_words
    units = _units(text, max_chunk_tokens, counter)
    chunks: list[ChunkDraft] = []
    current: list[_Unit] = []
    used = 0

    def flush() -> int:
        """Emit the current chunk; return how many trailing units go back to the queue."""
        nonlocal current, used
        carried = 0
        if current:
            body = text[current[0].start : current[-1].end]
            tokens = counter(body)
            # Packing sums per-sentence counts; a real tokenizer may count the join higher.
            while tokens > max_chunk_tokens and len(current) > 1:
                current.pop()
                carried += 1
                body = text[current[0].start : current[-1].end]
                tokens = counter(body)
            chunks.append(ChunkDraft(len(chunks), body, tokens, current[-1].cut))
        current, used = [], 0
        return carried

    paragraph_tokens: dict[int, int] = {}
    for unit in units:
        paragraph_tokens[unit.paragraph] = paragraph_tokens.get(unit.paragraph, 0) + unit.tokens
    i = 0
    while True:
        while i < len(units):
            unit = units[i]
            if current and unit.paragraph != current[-1].paragraph:
                # A paragraph moves whole to a fresh chunk if it fits there but not here.
                para_tokens = paragraph_tokens[unit.paragraph]
                if used + para_tokens > max_chunk_tokens and para_tokens <= max_chunk_tokens:
                    i -= flush()
                    continue
            if current and used + unit.tokens > max_chunk_tokens:
                i -= flush()
                continue
            current.append(unit)
            used += unit.tokens
            i += 1
        carried = flush()
        if not carried:
            break
        i -= carried
    if chunks:
        last = chunks[-1]
        chunks[-1] = ChunkDraft(last.index, last.text, last.token_count, END)
    return chunks


def _units(text: str, limit: int, counter: Callable[[str], int]) -> list[_Unit]:
    units: list[_Unit] = []
    for p_index, (p_start, p_end) in enumerate(_paragraph_spans(text)):
        sentences = _sentence_spans(text, p_start, p_end)
        for s_index, (s_start, s_end) in enumerate(sentences):
            cut = PARAGRAPH_END if s_index == len(sentences) - 1 else SENTENCE_END
            tokens = counter(text[s_start:s_end])
            if tokens <= limit:
                units.append(_Unit(s_start, s_end, tokens, cut, p_index))
            else:
                units.extend(_word_pieces(text, s_start, s_end, limit, counter, cut, p_index))
    return units


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for brk in _PARAGRAPH_BREAK.finditer(text):
        spans.append((pos, brk.start()))
        pos = brk.end()
    spans.append((pos, len(text)))
    return [_strip(text, s, e) for s, e in spans if text[s:e].strip()]


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for match in _SENTENCE_END.finditer(text, start, end):
        words = text[pos : match.start()].split()
        if words and words[-1].lstrip("(\"'").lower() in _ABBREVIATIONS:
            continue
        spans.append(_strip(text, pos, match.end()))
        pos = match.end()
    if text[pos:end].strip():
        spans.append(_strip(text, pos, end))
    return [span for span in spans if span[1] > span[0]]


def _word_pieces(
    text: str, start: int, end: int, limit: int, counter: Callable[[str], int], cut: str, para: int
) -> list[_Unit]:
    """Split an over-long sentence between words, and a word longer than the whole limit (a URL,
    base64) between characters; the last piece keeps the sentence's end."""
    words: list[tuple[int, int]] = []
    counts: list[int] = []
    for match in _WORD.finditer(text, start, end):
        tokens = counter(match.group())
        if tokens <= limit:
            words.append(match.span())
            counts.append(tokens)
            continue
        for s, e in _character_spans(text, match.start(), match.end(), limit, counter):
            words.append((s, e))
            counts.append(counter(text[s:e]))
    pieces: list[_Unit] = []
    i = 0
    while i < len(words):
        j, used = i + 1, counts[i]
        while j < len(words) and used + counts[j] <= limit:
            used += counts[j]
            j += 1
        tokens = counter(text[words[i][0] : words[j - 1][1]])
        while tokens > limit and j - i > 1:  # the tokenizer may count the join higher
            j -= 1
            tokens = counter(text[words[i][0] : words[j - 1][1]])
        piece_end = words[j - 1][1]
        if j == len(words):
            end_cut = cut
        else:
            end_cut = SENTENCE_CUT if text[piece_end].isspace() else WORD_CUT
        pieces.append(_Unit(words[i][0], piece_end, tokens, end_cut, para))
        i = j
    return pieces


def _character_spans(
    text: str, start: int, end: int, limit: int, counter: Callable[[str], int]
) -> list[tuple[int, int]]:
    """Cut one word into consecutive spans of at most `limit` tokens each, covering all of it."""
    spans: list[tuple[int, int]] = []
    pos = start
    while counter(text[pos:end]) > limit:
        size = _longest_fit(text, pos, end, limit, counter)
        spans.append((pos, pos + size))
        pos += size
    spans.append((pos, end))
    return spans


def _longest_fit(text: str, pos: int, end: int, limit: int, counter: Callable[[str], int]) -> int:
    """The most characters from `pos` that fit in `limit` tokens (the whole rest does not),
    shortened to end after a punctuation mark in its second half when that still fits."""

    def fits(size: int) -> bool:
        return counter(text[pos : pos + size]) <= limit

    if not fits(1):
        raise ValueError(f"one character {text[pos]!r} counts more than the limit of {limit} tokens")
    fit, step = 1, max(2, limit)
    while pos + step < end and fits(step):  # grow: a token may span many characters
        fit, step = step, step * 2
    unfit = min(step, end - pos)
    while unfit - fit > 1:
        middle = (fit + unfit) // 2
        fit, unfit = (middle, unfit) if fits(middle) else (fit, middle)
    for size in range(fit, fit // 2, -1):
        if not text[pos + size - 1].isalnum():
            return size if fits(size) else fit
    return fit


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
