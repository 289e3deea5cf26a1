"""Exactly one beat schedules: a celery beat Scheduler that ticks only while it holds a
renewable Redis lock. A second beat started against the same Redis waits as a hot standby
and takes over within one lease after the first one dies.

The schedule itself lives in memory (every Engram entry is periodic and expires with its
period), so two beats on one machine never fight over a schedule file.
"""

from __future__ import annotations

import logging
import secrets

from celery.beat import Scheduler

from engram.adapters.redis_client import get_redis
from engram.settings import get_settings

log = logging.getLogger("engram.beat")

LOCK_KEY = "engram:beat:lock"

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class SingleBeatScheduler(Scheduler):
    def __init__(self, *args, **kwargs):
        self.lease_ms = int(get_settings().beat_lock_seconds * 1000)
        self.token = secrets.token_hex(16)
        self.holding = False
        super().__init__(*args, **kwargs)
        # Renew well within the lease: the beat loop sleeps at most max_interval between ticks.
        self.max_interval = min(self.max_interval, self.lease_ms / 3000)

    def _hold(self) -> bool:
        try:
            client = get_redis()
            if self.holding:
                ok = bool(client.eval(_RENEW, 1, LOCK_KEY, self.token, self.lease_ms))
            else:
                ok = bool(client.set(LOCK_KEY, self.token, nx=True, px=self.lease_ms))
        except Exception:
            log.warning("beat lock: Redis unavailable; not scheduling", exc_info=True)
            ok = False
        if ok and not self.holding:
            log.info("beat lock acquired: this beat schedules")
        elif self.holding and not ok:
            log.warning("beat lock lost: standing by")
        self.holding = ok
        return ok

    def tick(self, *args, **kwargs):
        if not self._hold():
            return self.max_interval  # standby: try again within a third of the lease
        return super().tick(*args, **kwargs)

    def close(self):
        if self.holding:
            try:
                get_redis().eval(_RELEASE, 1, LOCK_KEY, self.token)
            except Exception:
                log.warning("beat lock release failed; it expires with its lease", exc_info=True)
            self.holding = False
        super().close()

    @property
    def info(self) -> str:
        return f"    . lock -> {LOCK_KEY} (lease {self.lease_ms / 1000:.0f}s)"
