"""Which failures are worth a retry: the drivers' transient errors, named in one place.

Only adapters/ knows the drivers, so the retry classification of every task and stage lives
here. Anything else (bad input, invalid LLM output, a bug) fails at once.
"""

from __future__ import annotations

import redis
from kombu.exceptions import OperationalError as KombuOperationalError
from sqlalchemy.exc import DBAPIError, OperationalError

from engram.adapters.llm.errors import LLMTransientError

RETRY_CLASSES: tuple[type[BaseException], ...] = (
    LLMTransientError,
    OperationalError,  # the database went away or refused the connection
    redis.ConnectionError,
    redis.TimeoutError,
    ConnectionError,
    TimeoutError,
    KombuOperationalError,  # the broker went away while publishing
)


def is_transient(exc: BaseException) -> bool:
    """A failure a retry with backoff may cure (an outage, a timeout, a rate limit)."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, RETRY_CLASSES)
