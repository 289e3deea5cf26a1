"""What every Engram task shares: the signed/public task base, payload validation, the retry policy.

Stages run on tasks/engine.py."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from celery import Task
from pydantic import BaseModel

from engram.adapters.errors import is_transient
from engram.adapters.task_events import Reply
from engram.celery_app import SHORT_LIVED_RESULTS
from engram.celery_app import PUBLIC_TASKS as PUBLIC_TASK_NAMES
from engram.celery_app import app
from engram.settings import get_settings
from engram.adapters.signing import HEADER, signing_key, verify

log = logging.getLogger("engram.tasks")

from engram.tasks.validation import InvalidPayload, parse_payload  # noqa: E402,F401 - re-exported


def backoff_seconds(retries: int) -> float:
    """Exponential backoff with full jitter."""
    s = get_settings()
    ceiling = min(s.retry_backoff_max_seconds, s.retry_backoff_base_seconds * (2**retries))
    return random.uniform(ceiling / 2, ceiling)


def redelivered(request) -> bool:
    """Whether this delivery may repeat an earlier attempt of the same message: a Celery retry,
    or the broker handing back a message a worker took and never acknowledged (acks_late)."""
    return bool(request.retries) or bool((request.delivery_info or {}).get("redelivered"))


# The producer contract (celery_app.PUBLIC_TASKS, also their routes): tasks any broker client may
# call, each checking the caller's grants. Every other engram.* task is internal and runs only
# messages Engram signed (adapters/signing).
PUBLIC_TASKS = frozenset(PUBLIC_TASK_NAMES)


class EngramTask(Task):
    payload_model: type[BaseModel] | None = None
    typing = False  # validation is ours, with a clear message
    # Task events show ids and counts of the payload, the answer and a failure, never memory text.
    Request = "engram.adapters.task_events:RedactedRequest"

    def __call__(self, *args, **kwargs):
        request = self.request
        local = request.called_directly or request.is_eager
        if self.name not in PUBLIC_TASKS and not local:
            _verify(self.name, kwargs, request)  # before anything else: nothing of a forged message runs
        if self.payload_model is not None:
            out = self._accepting(parse_payload(self.name, self.payload_model, args, kwargs))
        else:
            out = super().__call__(*args, **kwargs)
        return out if local else Reply(out)  # stored as the value, shown in the task-succeeded event as its summary

    def after_return(self, status, retval, task_id, args, kwargs, einfo):
        """An answer quoting memory (recall, agent memory, session turns) or a forget naming what
        went lives in the result backend ENGRAM_SHORT_RESULT_TTL_SECONDS, not result_expires: the
        producer fetches it at once."""
        if self.name in SHORT_LIVED_RESULTS and not (self.request.called_directly or self.request.is_eager):
            self.backend.expire(self.backend.get_key_for_task(task_id), get_settings().short_result_ttl_seconds)

    def _accepting(self, payload):
        """Every task rides out a short database/broker outage: retried with backoff, within a bound.

        Stage tasks retry their own bodies (the engine); this covers what runs outside them, e.g.
        a stage's opening transaction or an accepting task such as remember."""
        if self.request.called_directly or self.request.is_eager:
            return Task.__call__(self, payload)
        try:
            return Task.__call__(self, payload)
        except Exception as exc:
            settings = get_settings()
            retries = self.request.retries or 0
            if is_transient(exc) and retries < settings.accept_max_retries:
                log.warning("%s: transient %s, retry %d: %s", self.name, type(exc).__name__, retries + 1, exc)
                raise self.retry(exc=exc, countdown=backoff_seconds(retries), max_retries=settings.accept_max_retries)
            raise


def _verify(name: str, kwargs: dict, request) -> None:
    signature = getattr(request, HEADER, None) or (getattr(request, "headers", None) or {}).get(HEADER)
    verify(signing_key(get_settings()), name, kwargs, signature)


def engram_task(name: str, payload: type[BaseModel] | None = None, **options) -> Callable:
    """Register a task with the Engram base; `payload` is validated before the body runs.

    A task named in celery_app.PUBLIC_TASKS (the one declaration of the producer contract) may
    be called by any broker client and checks the caller's grants; every other task is internal
    and runs only messages Engram signed."""

    def decorate(fn: Callable) -> Task:
        return app.task(name=name, base=EngramTask, bind=True, payload_model=payload, **options)(fn)

    return decorate
