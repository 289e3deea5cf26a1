"""What Celery's task events (Flower, `celery events`, any EventReceiver) show of Engram's tasks:
ids and counts, never memory text.

Events are broadcast and kept by whoever listens: forget cannot reach them. So every event
Engram emits carries a summary instead of the payload or the answer: the ids that route a
task (dataset, user, run, session, search type, stage), numbers and flags, and for anything
else its size (`<text:42>`, `<id>`, `[3 items]`). Three places make the reprs:
- messages Engram publishes (task-sent, and the headers its workers read): SigningAMQP;
- task-received, -failed, -retried on a worker: RedactedRequest (also for a bare producer's
  messages, whose headers may quote the payload);
- task-succeeded: a task's return value is a `Reply`, whose repr is the summary (the result
  backend stores the value itself).
"""

from __future__ import annotations

import re
from typing import Any

from celery.worker.request import Request

# Keys whose string values are routing ids or names, not memory: kept as they are. `document` is
# the name a stage's document was remembered under (Flower shows what a stage works on), never text.
SHOWN_KEYS = frozenset({"dataset", "datasets", "document", "user", "run_id", "run_ids", "runs", "session_id",
                        "search_type", "status", "stage", "stages", "pipeline", "queue", "outcome", "mode"})
MAX_ITEMS = 5  # a list shows this many elements, then how many more
MAX_SHOWN = 80  # a kept string longer than this is memory, whatever its key
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def summarise(value: Any, key: str | None = None, depth: int = 0) -> Any:
    """`value` with every string outside SHOWN_KEYS replaced by its size (a uuid by `<id>`)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if key in SHOWN_KEYS and len(value) <= MAX_SHOWN:
            return value
        return "<id>" if _UUID.match(value) else f"<text:{len(value)}>"
    if depth >= 4:
        return "<...>"
    if isinstance(value, dict):
        return {str(k): summarise(v, str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        shown = [summarise(v, key, depth + 1) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            shown.append(f"<{len(value) - MAX_ITEMS} more>")
        return shown
    return f"<{type(value).__name__}>"


def summary_repr(value: Any) -> str:
    return repr(summarise(value))


class Reply:
    """A task's return value on its way to the result backend: serialised as the value itself
    (kombu's JSON encoder calls __json__), shown in events and logs as its summary."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __json__(self) -> Any:
        return self.value

    def __repr__(self) -> str:
        return summary_repr(self.value)


def exception_summary(exception: Any) -> str:
    """`BadInput(...)`: the type an event shows of a failure (its message may quote memory; the
    producer reads it from the result or the run status)."""
    name = str(exception or "").split("(", 1)[0].strip()
    return f"{name}(...)" if name else ""


class RedactedRequest(Request):
    """A worker's request whose events summarise the payload, whatever its producer put in the headers."""

    @property
    def argsrepr(self) -> str:
        try:
            return summary_repr(list(self.args))
        except Exception:  # an undecodable body: the task fails on it anyway
            return "<undecodable>"

    @property
    def kwargsrepr(self) -> str:
        try:
            return summary_repr(dict(self.kwargs))
        except Exception:
            return "<undecodable>"

    def send_event(self, type, **fields):
        if "exception" in fields:
            fields["exception"] = exception_summary(fields["exception"])
        if "traceback" in fields:
            fields["traceback"] = ""
        if "result" in fields and not isinstance(fields["result"], str):
            fields["result"] = summary_repr(fields["result"])
        super().send_event(type, **fields)
