"""The fleet-wide LLM rate limit lives in Redis, so two workers share one budget."""

from __future__ import annotations

import uuid

import redis

from engram.adapters.llm.ratelimit import RateLimiter


def test_two_workers_share_one_request_budget(services):
    prefix = f"engram:rl:test:{uuid.uuid4().hex[:6]}"
    first = RateLimiter(redis.Redis.from_url(services.redis_url), 5, 0, prefix=prefix)
    second = RateLimiter(redis.Redis.from_url(services.redis_url), 5, 0, prefix=prefix)
    waits = [limiter._take("rpm", 5, 1) for limiter in (first, second, first, second, first)]
    assert waits == [0, 0, 0, 0, 0]
    # The budget of 5 per minute is spent by the two together: the sixth call must wait ~12 s.
    assert 10_000 <= second._take("rpm", 5, 1) <= 12_100


def test_token_budget_counts_tokens_not_calls(services):
    prefix = f"engram:rl:test:{uuid.uuid4().hex[:6]}"
    limiter = RateLimiter(redis.Redis.from_url(services.redis_url), 0, 1000, prefix=prefix)
    assert limiter._take("tpm", 1000, 900) == 0
    assert limiter._take("tpm", 1000, 200) > 0
