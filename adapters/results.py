"""Celery task results in the Redis result backend that quote forgotten text or ids.

Results live up to `result_expires` (7 days); answers (recall, agent memory, sessions) only
ENGRAM_SHORT_RESULT_TTL_SECONDS, and the Engram client deletes each result once read. A
recall's answer quotes chunks, a capture or session result its texts and ids, a failure its
error. Forget removes every copy, so after it commits the results quoting any removed text or
naming any removed id are deleted, and forgetting a dataset deletes every result of a task
that named it (a producer asking for one afterwards gets PENDING, as for an expired result).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from typing import Any

log = logging.getLogger("engram.results")

RESULT_KEYS = "celery-task*"  # celery-task-meta-<id>, celery-taskset-meta-<id> (groups, chords)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # in lower-cased text
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


def _datasets(value: Any, depth: int = 0) -> Iterator[str]:
    """The dataset names a stored result's task was called with (extended results keep kwargs)."""
    if depth > 8:
        return
    if isinstance(value, str) and value[:1] in "[{":
        try:
            yield from _datasets(json.loads(value), depth + 1)
        except ValueError:
            pass
    elif isinstance(value, dict):
        if isinstance(value.get("dataset"), str):
            yield value["dataset"]
        if isinstance(value.get("datasets"), list):
            yield from (d for d in value["datasets"] if isinstance(d, str))
        for v in value.values():
            yield from _datasets(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _datasets(v, depth + 1)


def _flat(raw: str) -> tuple[str, set[str]]:
    """A stored result as one lower-cased, space-normalised text, and the datasets it names."""
    try:
        value = json.loads(raw)
    except ValueError:
        return " ".join(raw.lower().split()), set()
    return " ".join(" ".join(_strings(value)).lower().split()), set(_datasets(value))


def purge_quoting(client, texts: Iterable[str], ids: Iterable[Any] = (), datasets: Iterable[str] = (),
                  batch: int = 500) -> int:
    """Delete the results (in the Redis of `client`, decoding responses) that quote any of
    `texts`, name any of `ids` or were produced by a task called on any of `datasets`."""
    needles = {" ".join(t.lower().split()) for t in texts if t}
    needles = sorted((n for n in needles if len(n) >= MIN_NEEDLE), key=len)
    wanted_ids = {str(i).lower() for i in ids}
    wanted_datasets = set(datasets)
    if not (needles or wanted_ids or wanted_datasets):
        return 0
    deleted = 0
    keys: list[str] = []

    def doomed(flat: str, named: set[str]) -> bool:
        return bool(named & wanted_datasets) or (bool(wanted_ids) and not wanted_ids.isdisjoint(
            UUID.findall(flat))) or any(n in flat for n in needles)

    def flush() -> int:
        gone = [k for k, v in zip(keys, client.mget(keys)) if isinstance(v, str) and doomed(*_flat(v))]
        keys.clear()
        return client.delete(*gone) if gone else 0

    for key in client.scan_iter(match=RESULT_KEYS, count=batch, _type="string"):
        keys.append(key)
        if len(keys) >= batch:
            deleted += flush()
    if keys:
        deleted += flush()
    if deleted:
        log.info("forget: deleted %d task results quoting forgotten text or ids", deleted)
    return deleted
