"""Session lane matching: token overlap of the query with stored Q&A entries (SPEC §5)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

_TOKEN = re.compile(r"\b\w+\b")
DEFAULT_LIMIT = 15


E = TypeVar("E")


def tokens(text: str | None) -> set[str]:
    """Lower-cased word tokens of length >= 2 (single letters carry no signal)."""
    if not text:
        return set()
    return {t for t in (m.group(0).lower() for m in _TOKEN.finditer(text)) if len(t) >= 2}


def _field(entry: Any, name: str) -> Any:
    # Entries may be ORM rows / dataclasses or plain dicts from a cache.
    if isinstance(entry, dict):
        return entry.get(name)
    return getattr(entry, name, None)


def entry_score(query_tokens: set[str], entry: Any) -> int:
    text = " ".join(str(_field(entry, f) or "") for f in ("question", "context", "answer"))
    return len(query_tokens & tokens(text))


def match_session_entries(
    query: str, entries: Sequence[E], limit: int = DEFAULT_LIMIT
) -> list[tuple[E, int]]:
    """Entries sharing at least one token with the query, best overlap first.

    Ties go to the most recent entry (created_at descending; missing created_at is oldest),
    then to input order.
    """
    query_tokens = tokens(query)
    if not query_tokens or limit <= 0:
        return []
    scored = [(e, entry_score(query_tokens, e)) for e in entries]
    scored = [pair for pair in scored if pair[1] > 0]
    dated = [p for p in scored if _field(p[0], "created_at") is not None]
    undated = [p for p in scored if _field(p[0], "created_at") is None]
    # Two stable sorts: recency first, then score, so recency breaks score ties.
    dated.sort(key=lambda p: _field(p[0], "created_at"), reverse=True)
    ordered = dated + undated
    ordered.sort(key=lambda p: p[1], reverse=True)
    return ordered[:limit]
