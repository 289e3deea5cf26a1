"""Celery task results in the Redis result backend that quote forgotten text.

Results live up to `result_expires` (7 days): a recall's answer quotes chunks, a capture or
session result its texts, a failure its error. Forget removes every copy, so after it commits
the results quoting any removed text are deleted (a producer asking for one afterwards gets
PENDING, as for an expired result).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

log = logging.getLogger("engram.results")

RESULT_KEYS = "celery-task*"  # celery-task-meta-<id>, celery-taskset-meta-<id> (groups, chords)
MIN_NEEDLE = 4  # shorter removed texts (e.g. an entity named "Al") would match everything


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string in a stored result, with JSON nested in strings (extended results) decoded."""
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
        if value[:1] in "[{":
            try:
                yield from _strings(json.loads(value), depth + 1)
            except ValueError:
                pass
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k, depth + 1)
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def _flat(raw: str) -> str:
    try:
        parts = list(_strings(json.loads(raw)))
    except ValueError:
        parts = [raw]
    return " ".join(" ".join(parts).lower().split())


def purge_quoting(client, texts: Iterable[str], batch: int = 500) -> int:
    """Delete the results (in the Redis of `client`, decoding responses) that quote any of `texts`."""
    needles = {" ".join(t.lower().split()) for t in texts if t}
    needles = sorted((n for n in needles if len(n) >= MIN_NEEDLE), key=len)
    if not needles:
        return 0
    deleted = 0
    keys: list[str] = []

    def flush() -> int:
        flat = [(k, _flat(v)) for k, v in zip(keys, client.mget(keys)) if isinstance(v, str)]
        doomed = [k for k, f in flat if any(n in f for n in needles)]
        keys.clear()
        return client.delete(*doomed) if doomed else 0

    for key in client.scan_iter(match=RESULT_KEYS, count=batch, _type="string"):
        keys.append(key)
        if len(keys) >= batch:
            deleted += flush()
    if keys:
        deleted += flush()
    if deleted:
        log.info("forget: deleted %d task results quoting forgotten text", deleted)
    return deleted
