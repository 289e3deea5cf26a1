"""Debounce of automatic improves (SPEC 6.2): fire on N new entries or T seconds, first always."""

from __future__ import annotations

from datetime import datetime, timedelta


def is_due(entries_since: int, last_improve_at: datetime | None, now: datetime, n: int, t_seconds: float) -> bool:
    if last_improve_at is None:
        return True
    return entries_since >= n or now - last_improve_at >= timedelta(seconds=t_seconds)
