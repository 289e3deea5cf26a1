"""The one LLM gateway: structured output into pydantic models, bounded re-asks, accounting."""

from __future__ import annotations

import functools
import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from engram.adapters import metrics
from engram.adapters.llm import usage
from engram.adapters.llm.errors import LLMInvalidOutput
from engram.adapters.llm.providers import Provider, estimate_tokens, provider_from_settings
import os

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


@functools.lru_cache(maxsize=256)
def _schema_text(model: type[BaseModel]) -> str:
    """A response model's JSON schema as the prompt states it: built once per model class
    (pydantic's schema generation costs ~1.5 ms, on every structured call otherwise)."""
    return json.dumps(model.model_json_schema())


def _parse(text: str, model: type[T]) -> T:
    cleaned = _FENCE.sub("", text.strip())
    return model.model_validate_json(cleaned)


class LLMGateway:
    def __init__(self, provider: Provider, max_reasks: int = 2, rate_limiter=None):
        self.provider = provider
        self.max_reasks = max_reasks
        self.rate_limiter = rate_limiter

    @property
    def model_label(self) -> str:
        """The model as metrics name it (a replay cassette by its file name, not its path)."""
        name = getattr(self.provider, "name", "") or type(self.provider).__name__
        return "replay:" + name.rsplit("/", 1)[-1] if name.startswith("replay:") else name

    @property
    def generates(self) -> bool:
        """False when no model stands behind completions (offline default)."""
        return self.provider.generates

    def _call(self, messages: list[dict], response_model: str | None, subject: str | None):
        if self.rate_limiter is not None:
            self.rate_limiter.acquire(sum(len(str(m.get("content", ""))) for m in messages) // 4)
        try:
            reply = self.provider.call(messages, response_model, subject)
        except Exception:
            # A failed call is still a call (and usually billed for its prompt).
            prompt_tokens = estimate_tokens(" ".join(str(m.get("content", "")) for m in messages))
            usage.record(1, prompt_tokens, 0)
            metrics.count_llm_call(self.model_label, prompt_tokens, 0)
            raise
        usage.record(1, reply.prompt_tokens, reply.completion_tokens)
        metrics.count_llm_call(self.model_label, reply.prompt_tokens, reply.completion_tokens)
        return reply

    def structured(self, messages: list[dict], response_model: type[T], *, subject: str | None = None) -> T:
        """Ask for JSON matching `response_model`; re-ask with the error a bounded number of times."""
        schema = _schema_text(response_model)
        prompt = list(messages) + [
            {"role": "system", "content": f"Answer with one JSON object matching this JSON schema:\n{schema}"}
        ]
        last_error = ""
        for _attempt in range(self.max_reasks + 1):
            reply = self._call(prompt, response_model.__name__, subject)
            try:
                return _parse(reply.text, response_model)
            except (ValidationError, ValueError) as exc:
                last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                prompt = prompt + [
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": f"That answer was invalid ({last_error}). Reply again with valid JSON only."},
                ]
        raise LLMInvalidOutput(
            f"{response_model.__name__}: invalid output after {self.max_reasks + 1} attempts: {last_error}"
        )

    def complete(self, messages: list[dict]) -> str:
        return self._call(messages, None, None).text


_gateways: dict[tuple, LLMGateway] = {}


def gateway_from_settings(settings) -> LLMGateway:
    """One gateway per process and configuration: a task reuses it (a replay cassette is parsed
    once, not per task; the provider re-reads it when the file changes)."""
    from engram.adapters.llm.ratelimit import limiter_from_settings

    key = (os.getpid(), settings.llm_model, settings.llm_api_key, settings.llm_api_base, settings.llm_timeout_seconds,
           settings.llm_max_reasks, settings.llm_requests_per_minute, settings.llm_tokens_per_minute, settings.redis_url)
    gateway = _gateways.get(key)
    if gateway is None:
        gateway = LLMGateway(provider_from_settings(settings), settings.llm_max_reasks, limiter_from_settings(settings))
        _gateways.clear()  # a changed configuration replaces the old gateway
        _gateways[key] = gateway
    return gateway
