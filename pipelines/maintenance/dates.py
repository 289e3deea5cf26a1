"""When an assertion was made, read from its own words (SPEC 7.2 ordering). Pure.

Extraction keeps dates in text, not in fields: "Alice is CEO of Acme (2020)". Supersession must
let the later *assertion* win, not the later-ingested document, so an edge without valid_from
is dated by this rule:

1. the latest 4-digit year (1900-2099) in the edge's own description;
2. else the latest year in the sentences of its source chunks that name both endpoints;
3. else the latest year anywhere in its source chunks;
4. else no date: the edge's updated_at (when Engram learned it) stands in.

A year becomes 1 January of that year, UTC. The latest year wins within a tier because an edge
asserted again later is current as of that later assertion.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

_YEAR = re.compile(r"(?<![\d])(19\d{2}|20\d{2})(?![\d])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def latest_year(text: str | None) -> int | None:
    years = [int(y) for y in _YEAR.findall(text or "")]
    return max(years) if years else None


def _latest(texts: Iterable[str]) -> int | None:
    years = [y for y in (latest_year(t) for t in texts) if y is not None]
    return max(years) if years else None


def _naming_sentences(text: str, names: list[str]) -> list[str]:
    wanted = [n.casefold() for n in names if n and n.strip()]
    if not wanted:
        return []
    return [s for s in _SENTENCE_END.split(text) if all(n in s.casefold() for n in wanted)]


def assertion_year(description: str | None, chunk_texts: Iterable[str], names: Iterable[str] = ()) -> int | None:
    """The year an edge was asserted, by the tiers in the module docstring."""
    year = latest_year(description)
    if year is not None:
        return year
    texts = list(chunk_texts)
    names = [n.replace("_", " ") for n in names if n]
    year = _latest(s for t in texts for s in _naming_sentences(t, names))
    if year is not None:
        return year
    return _latest(texts)


def assertion_date(description: str | None, chunk_texts: Iterable[str], names: Iterable[str] = ()) -> datetime | None:
    year = assertion_year(description, chunk_texts, names)
    return None if year is None else datetime(year, 1, 1, tzinfo=UTC)
