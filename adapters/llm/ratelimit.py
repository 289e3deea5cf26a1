"""A fleet-wide token bucket in Redis, so many workers together stay under provider limits.

The bucket's clock is Redis's own (TIME in the script): workers on several machines whose clocks
disagree would otherwise refill it from each other's timestamps (a host ahead by a minute finds
a full bucket, one behind drains it below zero)."""

from __future__ import annotations

import time

_BUCKET = """
-- KEYS[1] bucket; ARGV: capacity, refill per ms, cost
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + (now - ts) * rate)
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
else
  wait = math.ceil((cost - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], 120000)
return wait
"""


class RateLimiter:
    def __init__(self, redis_client, requests_per_minute: int, tokens_per_minute: int, prefix: str = "engram:rl"):
        self.redis = redis_client
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self.prefix = prefix
        self._script = redis_client.register_script(_BUCKET)

    def _take(self, key: str, per_minute: int, cost: int) -> int:
        cost = min(cost, per_minute)  # a single call bigger than the bucket still goes through
        return int(self._script(keys=[f"{self.prefix}:{key}"], args=[per_minute, per_minute / 60000.0, cost]))

    def acquire(self, tokens: int = 1) -> None:
        """Block until one request (and `tokens` tokens) fit in the fleet's budget."""
        for key, limit, cost in (("rpm", self.rpm, 1), ("tpm", self.tpm, max(1, tokens))):
            if limit <= 0:
                continue
            while (wait := self._take(key, limit, cost)) > 0:
                time.sleep(min(wait, 5000) / 1000.0)


def limiter_from_settings(settings) -> RateLimiter | None:
    if settings.llm_requests_per_minute <= 0 and settings.llm_tokens_per_minute <= 0:
        return None
    from engram.adapters.redis_client import get_redis

    return RateLimiter(get_redis(settings), settings.llm_requests_per_minute, settings.llm_tokens_per_minute)
