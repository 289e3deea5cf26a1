"""The explorer's reads: public tasks called as the logged-in user, their refusals turned into
HTTP answers that never say whether someone else's dataset, item or entity exists."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any
from engram.tasks.client import EngramError

NOT_FOUND = "Nothing by that name that you can read."
# A task's refusal (the exception's class name, as Celery carries it back) -> HTTP status.
_MISSING = {"UnknownDataset": 404, "AccessDenied": 403, "LookupError": 404}


class Refused(Exception):
    """A read the explorer answers with `status` and `message` instead of a page."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _refusal(exc: BaseException) -> Refused:
    cause = exc.__cause__ or exc
    kind = type(cause).__name__
    text = str(cause)
    if kind in _MISSING:
        return Refused(_MISSING[kind], NOT_FOUND)
    if kind == "BadInput" and text.startswith(("no entity", "no object")):
        return Refused(404, NOT_FOUND)
    if kind in ("BadInput", "InvalidPayload", "ValidationError", "ValueError"):
        return Refused(400, text)
    return Refused(502, f"the task failed: {text}")


class Reader:
    """Public tasks through an EngramClient (a worker answers them), always as `user`."""

    def __init__(self, client):
        self.client = client

    def call(self, task: str, user: str, **payload: Any) -> dict:
        payload = {k: v for k, v in payload.items() if v is not None}
        try:
            return self.client.call(task, user=user, **payload)
        except EngramError as exc:
            raise _refusal(exc) from None
        except TimeoutError:
            raise Refused(504, f"{task} did not answer in time: is a worker running?") from None

    def many(self, user: str, calls: dict[str, tuple[str, dict]]) -> dict[str, dict]:
        """Several tasks at once (key -> (task, payload)): a page waits for the slowest, not the sum.
        The first refusal (in key order) is the page's."""
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            futures = {key: pool.submit(self.call, task, user, **payload) for key, (task, payload) in calls.items()}
        return {key: future.result() for key, future in futures.items()}

    @staticmethod
    def pick(listed: dict, name: str) -> dict:
        """The dataset named `name` in an engram.datasets answer (own before shared, as the tasks
        resolve a name), else 404."""
        found = [d for d in listed["datasets"] if d["name"] == name]
        if not found:
            raise Refused(404, NOT_FOUND)
        return sorted(found, key=lambda d: not d["own"])[0]
