"""Payload validation at the task boundary (no Celery, no services: fuzzed in unit tests)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError


class InvalidPayload(ValueError):
    """The payload does not match the task's pydantic model. Never retried; nothing written."""


def parse_payload(name: str, model: type[BaseModel], args: tuple, kwargs: dict[str, Any]) -> BaseModel:
    if args:
        raise InvalidPayload(f"{name} takes keyword arguments only (the payload fields)")
    try:
        return model.model_validate(kwargs)
    except ValidationError as exc:
        raise InvalidPayload(f"invalid payload for {name}: {_describe(exc)}") from None
    except (TypeError, ValueError, AttributeError) as exc:  # a validator choking on an odd type
        raise InvalidPayload(f"invalid payload for {name}: {type(exc).__name__}: {exc}") from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
