"""Messages Engram publishes carry an HMAC of (task name, kwargs); internal tasks refuse others.

The key is ENGRAM_SIGNING_KEY, or (embedded default) one generated once in the state dir and
shared by every process on the machine. A fleet on several machines sets the same key on all.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Any

from celery.app.amqp import AMQP
from kombu.utils.json import dumps as kombu_dumps
from kombu.utils.json import loads as kombu_loads

from engram.adapters.task_events import summary_repr
from engram.settings import get_settings

HEADER = "engram_sig"
_keys: dict[tuple, bytes] = {}


class UnsignedMessage(PermissionError):
    """An internal task received a message Engram did not produce."""


def signing_key(settings) -> bytes:
    cache = (settings.signing_key, str(settings.state_dir))
    if cache in _keys:
        return _keys[cache]
    if settings.signing_key:
        key = settings.signing_key.encode()
    else:
        path = settings.state_dir / "signing.key"
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        try:  # first process on the machine creates it; O_EXCL makes concurrent starters agree
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
        except FileExistsError:
            pass
        key = b""
        for _ in range(50):  # a concurrent creator may not have written it yet
            key = path.read_bytes().strip()
            if key:
                break
            time.sleep(0.02)
    _keys[cache] = key
    return key


def _canonical(name: str, kwargs: Any) -> bytes:
    return json.dumps([name, kwargs], sort_keys=True, separators=(",", ":"), default=str).encode()


def sign(key: bytes, name: str, kwargs: dict | None) -> str:
    # The worker sees kwargs as the serializer decoded them: sign that form.
    decoded = kombu_loads(kombu_dumps(kwargs or {}))
    return hmac.new(key, _canonical(name, decoded), hashlib.sha256).hexdigest()


def verify(key: bytes, name: str, kwargs: dict | None, signature: str | None) -> None:
    expected = hmac.new(key, _canonical(name, kwargs or {}), hashlib.sha256).hexdigest()
    if not signature or not hmac.compare_digest(expected, str(signature)):
        raise UnsignedMessage(
            f"{name} is internal to Engram and refuses this message: it was not produced by Engram "
            f"({'no' if not signature else 'a wrong'} signature; producers call the public tasks such as "
            "engram.remember, and every Engram process needs the same ENGRAM_SIGNING_KEY)")


class SigningAMQP(AMQP):
    """The Engram app's message builder: every task message it publishes is signed."""

    def as_task_v2(self, task_id, name, args=None, kwargs=None, *rest, **options):
        # What task-sent events and the worker's logs show: ids and counts, never the payload.
        if options.get("argsrepr") is None:
            options["argsrepr"] = summary_repr(list(args or ()))
        if options.get("kwargsrepr") is None:
            options["kwargsrepr"] = summary_repr(dict(kwargs or {}))
        message = super().as_task_v2(task_id, name, args, kwargs, *rest, **options)

        message.headers[HEADER] = sign(signing_key(get_settings()), name, kwargs)
        return message

    def _create_task_sender(self):
        send = super()._create_task_sender()

        def send_task_message(producer, name, message, *args, headers=None, **kwargs):
            # A re-sent request (Task.retry) passes its old headers, whose signature covers the
            # old kwargs: the one as_task_v2 just computed for this message's kwargs stands.
            if headers and HEADER in headers:
                headers = {k: v for k, v in headers.items() if k != HEADER}
            return send(producer, name, message, *args, headers=headers, **kwargs)

        return send_task_message



def fingerprint(key: bytes) -> str:
    """What a worker tells others of its key: an HMAC under it (never the key itself)."""
    return hmac.new(key, b"engram fleet key fingerprint", hashlib.sha256).hexdigest()[:16]
