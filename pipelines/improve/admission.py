"""Host admission of automatic improves (SPEC 6.2): fail-open.

The callback gets the request as a dict and returns None (allow) or a non-empty reason
string (decline). Raising, or returning anything else, allows: a broken host hook must
never stop memory from improving. Explicit improves never ask.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("engram.improve.admission")


def admit(callback: Callable[[dict], object] | None, request: dict) -> str | None:
    """The decline reason, or None when the improve may start."""
    if callback is None:
        return None
    try:
        answer = callback(request)
    except Exception:
        log.warning("admission callback raised; allowing the improve (fail-open)", exc_info=True)
        return None
    if isinstance(answer, str) and answer.strip():
        return answer.strip()
    if answer is not None:
        log.warning("admission callback returned %r (neither None nor a reason); allowing", type(answer).__name__)
    return None
