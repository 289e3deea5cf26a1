"""The producer contract's common ground: the name pattern and the Payload base that refuses
text Postgres cannot store (every request model derives from it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.:@ -]{0,199}$"


def _bad_text(value) -> str | None:
    """Why a string (or any string inside a list/dict) cannot be stored in Postgres, if it can't."""
    if isinstance(value, str):
        nul = value.find("\x00")
        if nul >= 0:
            return f"contains a NUL character (\\x00) at offset {nul}"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates from a bad decoder upstream
            return f"is not valid Unicode ({exc.reason} at offset {exc.start})"
    elif isinstance(value, (list, tuple, set)):
        return next((r for r in map(_bad_text, value) if r), None)
    elif isinstance(value, dict):
        return next((r for r in map(_bad_text, [*value.keys(), *value.values()]) if r), None)
    return None


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _storable_text(cls, value):
        # Every string may reach a text column: refuse what Postgres cannot store, naming the field,
        # instead of failing mid-transaction with a driver error.
        problem = _bad_text(value)
        if problem:
            raise ValueError(problem)
        return value
