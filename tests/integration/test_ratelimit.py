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


def test_hosts_whose_clocks_disagree_still_share_one_budget(services, monkeypatch):
    """Workers on other machines keep other times: the bucket runs on Redis's clock, so a host a
    minute ahead finds no refill the others did not earn, and one a minute behind no debt."""
    import time as real_time

    from engram.adapters.llm import ratelimit

    class Skewed:
        def __init__(self, offset: float):
            self.offset = offset

        def time(self) -> float:
            return real_time.time() + self.offset

        def sleep(self, seconds: float) -> None:
            real_time.sleep(seconds)

    for offset in (60.0, -60.0):
        prefix = f"engram:rl:test:{uuid.uuid4().hex[:6]}"
        here = RateLimiter(redis.Redis.from_url(services.redis_url), 2, 0, prefix=prefix)
        there = RateLimiter(redis.Redis.from_url(services.redis_url), 2, 0, prefix=prefix)
        assert [here._take("rpm", 2, 1), here._take("rpm", 2, 1)] == [0, 0]  # 2 a minute: spent
        monkeypatch.setattr(ratelimit, "time", Skewed(offset))  # the other host's clock
        wait = there._take("rpm", 2, 1)
        monkeypatch.undo()
        assert 25_000 <= wait <= 30_100, (offset, wait)  # one request refills in 30 s, whoever asks
