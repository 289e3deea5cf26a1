"""Parts of a multi-message request staged in Redis until its last part (engram.import)."""

from __future__ import annotations

import json
from typing import Any

from engram.adapters.redis_client import get_redis

TTL_SECONDS = 3600

# Append part N only when N parts are staged; returns the staged count before (-1: key gone stale).
_APPEND = """
local n = redis.call('LLEN', KEYS[1])
if n == tonumber(ARGV[1]) then
  redis.call('RPUSH', KEYS[1], ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return n
"""


def _key(scope: str, ident: str) -> str:
    return f"engram:staged:{scope}:{ident}"


def stage_part(scope: str, ident: str, part: int, body: Any) -> int:
    """Stage `body` as part `part`; returns how many parts were staged before this call."""
    return int(get_redis().eval(_APPEND, 1, _key(scope, ident), part, json.dumps(body), TTL_SECONDS))


def staged_parts(scope: str, ident: str) -> list[Any]:
    return [json.loads(p) for p in get_redis().lrange(_key(scope, ident), 0, -1)]


def drop_parts(scope: str, ident: str) -> None:
    get_redis().delete(_key(scope, ident))
