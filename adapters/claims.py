"""Redis claims for improves (SPEC 6.2): all keys or none, leases, random tokens, fencing.

One Lua script takes every session key and the dataset key at once or none of them, and
draws the next fencing number (INCR, never below the floor the caller read from Postgres,
so a Redis that lost its data still hands out numbers above every fence already written).
Renewal and release compare the full claim value, so only the holder can extend or free a
claim. All keys share the `{engram-claims}` hash tag: one slot on a Redis Cluster too.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import redis

from engram.pipelines.improve.claiming import Busy, Claim  # noqa: F401 - the claim values, re-exported

log = logging.getLogger("engram.claims")

PREFIX = "engram:{engram-claims}"
FENCE_KEY = f"{PREFIX}:fence"

_CLAIM = """
-- KEYS: the claim keys, then the fence counter. ARGV: token, lease ms, fence floor, holder info
local n = #KEYS - 1
for i = 1, n do
  local held = redis.call('GET', KEYS[i])
  if held then return {0, KEYS[i], held} end
end
local fence = redis.call('INCR', KEYS[#KEYS])
local floor = tonumber(ARGV[3])
if fence <= floor then
  fence = floor + 1
  redis.call('SET', KEYS[#KEYS], fence)
end
local value = ARGV[1] .. '|' .. fence .. '|' .. ARGV[4]
for i = 1, n do redis.call('SET', KEYS[i], value, 'PX', ARGV[2]) end
return {1, fence, value}
"""

_RENEW = """
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1
"""

_RELEASE = """
local freed = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    freed = freed + 1
  end
end
return freed
"""


def session_key(dataset_id, session_id: str) -> str:
    return f"{PREFIX}:session:{dataset_id}:{session_id}"


def dataset_key(dataset_id) -> str:
    return f"{PREFIX}:dataset:{dataset_id}"


def keys_for(dataset_id, session_ids: Sequence[str]) -> list[str]:
    """Sorted, so every claimant names the same keys in the same order."""
    return sorted({session_key(dataset_id, s) for s in session_ids}) + [dataset_key(dataset_id)]


def describe(value: str) -> dict:
    """A stored claim value as {token, fence, holder...} for operators."""
    token, fence, info = (value.split("|", 2) + ["", ""])[:3]
    try:
        details = json.loads(info) if info else {}
    except ValueError:
        details = {"raw": info}
    return {"token": token[:8], "fence": int(fence) if fence.isdigit() else None, **details}


class Claims:
    """The improve claims port (pipelines/improve/claiming.py Claims) on Redis."""

    def __init__(self, client: redis.Redis):
        self.client = client
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    @staticmethod
    def keys(dataset_id, session_ids: Sequence[str]) -> list[str]:
        return keys_for(dataset_id, session_ids)

    @staticmethod
    def describe(value: str) -> dict:
        return describe(value)

    def claim(self, keys: Sequence[str], lease_seconds: float, floor: int = 0, info: dict | None = None) -> Claim | Busy:
        token = secrets.token_hex(16)
        holder = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(), **(info or {})},
                            separators=(",", ":"))
        lease_ms = max(1, int(lease_seconds * 1000))
        ok, a, b = self._claim(keys=[*keys, FENCE_KEY], args=[token, lease_ms, int(floor), holder])
        if int(ok) != 1:
            return Busy(key=str(a), holder=str(b))
        return Claim(keys=tuple(keys), value=str(b), fence=int(a), lease_ms=lease_ms)

    def renew(self, claim: Claim) -> bool:
        """Extend every key's lease; False when any key is no longer ours (lease lost)."""
        return int(self._renew(keys=list(claim.keys), args=[claim.value, claim.lease_ms])) == 1

    def release(self, claim: Claim) -> int:
        """Free the keys still ours; never touches a key someone else now holds."""
        return int(self._release(keys=list(claim.keys), args=[claim.value]))

    def held(self, claim: Claim) -> bool:
        return all(v == claim.value for v in self.client.mget(list(claim.keys)))

    def holders(self, pattern: str = f"{PREFIX}:*") -> dict[str, dict]:
        """Every live claim key with its holder (for `engram sessions`)."""
        out = {}
        for key in self.client.scan_iter(match=pattern, count=500):
            if key == FENCE_KEY:
                continue
            value = self.client.get(key)
            if value:
                out[key] = {**describe(value), "ttl_ms": self.client.pttl(key)}
        return out


@contextmanager
def keep_alive(claims: Claims, claim: Claim, on_renew: Callable[[], None] | None = None) -> Iterator[None]:
    """Renew the lease every third of it while the body works; stop renewing once it is lost
    (the fence then refuses the holder's writes).

    on_renew records the renewal elsewhere (the claim row), so sweeps can tell a live
    holder from a dead one.
    """
    stop = threading.Event()
    every = max(0.2, claim.lease_ms / 3000)

    def loop() -> None:
        while not stop.wait(every):
            try:
                if not claims.renew(claim):
                    log.warning("claim lost: %s", claim.keys)
                    return
                if on_renew is not None:
                    on_renew()
            except Exception:  # a blip: the fence still guards every write
                log.warning("claim renewal failed", exc_info=True)

    thread = threading.Thread(target=loop, name="claim-renewal", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
