"""One Redis client per process (locks, rate limits, debounce state)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TypeVar

import redis

from engram.adapters.services import resolve_redis
from engram.settings import Settings, get_settings

_client: redis.Redis | None = None
_pid: int | None = None
log = logging.getLogger("engram.redis")
T = TypeVar("T")


def get_redis(settings: Settings | None = None) -> redis.Redis:
    global _client, _pid
    if _client is None or _pid != os.getpid():
        settings = settings or get_settings()
        _client = redis.Redis.from_url(resolve_redis(settings), decode_responses=True)
        _pid = os.getpid()
    return _client


def best_effort(op: Callable[[redis.Redis], T], what: str) -> T | None:
    """op(client), or None (logged) when Redis cannot be reached. Only for hints and
    statistics whose loss costs nothing (never for locks, fences or rate limits)."""
    try:
        return op(get_redis())
    except redis.RedisError as exc:
        log.warning("%s skipped: Redis unreachable (%s)", what, exc)
        return None


def reset_redis() -> None:
    global _client, _pid
    _client = None
    _pid = None


def probe_redis(url: str, timeout: float = 3) -> str:
    """The server's version over a short-lived client (`engram doctor`); raises when unreachable."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        return str(client.info("server").get("redis_version", "?"))
    finally:
        client.close()
