"""Token and call accounting: the gateway adds to whichever scope the running stage opened."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
import threading
from dataclasses import dataclass, field


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Extraction fans chunks out to threads that all add to one stage's usage.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, calls: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


_scopes: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar("engram_usage", default=())


@contextlib.contextmanager
def usage_scope() -> Iterator[Usage]:
    usage = Usage()
    token = _scopes.set(_scopes.get() + (usage,))
    try:
        yield usage
    finally:
        _scopes.reset(token)


def record(calls: int, prompt_tokens: int, completion_tokens: int) -> None:
    for usage in _scopes.get():  # nested scopes (run and stage) all see the call
        usage.add(calls, prompt_tokens, completion_tokens)
