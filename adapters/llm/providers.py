"""Who answers an LLM call: litellm (any configured model), a replay cassette, or offline."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engram.adapters.llm.errors import CassetteMiss, LLMError, LLMTransientError, LLMUnavailable


@dataclass
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class Provider(Protocol):
    name: str
    generates: bool  # False: completion calls have no model behind them (offline)

    def call(self, messages: list[dict], response_model: str | None, subject: str | None) -> Reply: ...


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _prompt_text(messages: list[dict]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


class LiteLLMProvider:
    generates = True

    def __init__(self, model: str, api_key: str | None, api_base: str | None, timeout: float):
        # Never fetch the price list over the network.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        self.name = model
        self.model = model
        self.api_key = api_key
        self.api_base = api_base
        self.timeout = timeout

    def call(self, messages: list[dict], response_model: str | None, subject: str | None) -> Reply:
        import litellm

        kwargs = {"model": self.model, "messages": messages, "timeout": self.timeout}
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if response_model is not None:
            kwargs["response_format"] = {"type": "json_object"}
        transient = (
            litellm.Timeout,
            litellm.RateLimitError,
            litellm.APIConnectionError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
        )
        try:
            response = litellm.completion(**kwargs)
        except transient as exc:
            raise LLMTransientError(f"{type(exc).__name__}: {exc}") from exc
        except litellm.exceptions.BadRequestError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from exc
        text = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        return Reply(
            text=text,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or estimate_tokens(_prompt_text(messages)),
            completion_tokens=getattr(usage, "completion_tokens", 0) or estimate_tokens(text),
        )


# Cassette entries may simulate provider failures, so tests reach the gateway's real paths.
_SIMULATED = {
    "timeout": lambda: LLMTransientError("Timeout: simulated by cassette"),
    "rate_limit": lambda: LLMTransientError("RateLimitError: simulated by cassette"),
    "server_error": lambda: LLMTransientError("InternalServerError: simulated by cassette"),
}


class ReplayProvider:
    """Answers from a recorded cassette: {"version": 1, "entries": [{contains, response_model, response}]}.

    The first entry whose `contains` occurs in the prompt and whose `response_model` is the
    requested model's class name (or "*") answers. An entry may carry `"error": "timeout" |
    "rate_limit" | "server_error"` instead of a response to simulate a failing provider; a
    string response is returned verbatim (e.g. invalid JSON); `delay_seconds` simulates
    latency. The file is re-read when it
    changes, so a long-lived worker sees an edited cassette.
    """

    generates = True

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self.name = f"replay:{self.path}"
        self._lock = threading.Lock()
        self._mtime: float | None = None
        self._entries: list[dict] = []
        self._load()

    def _load(self) -> None:
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError as exc:
            raise LLMError(f"replay cassette not found: {self.path}") from exc
        with self._lock:
            if mtime == self._mtime:
                return
            data = json.loads(self.path.read_text())
            if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("entries"), list):
                raise LLMError(f"cassette {self.path} must be {{'version': 1, 'entries': [...]}}")
            for i, entry in enumerate(data["entries"]):
                if "contains" not in entry or "response_model" not in entry:
                    raise LLMError(f"cassette {self.path} entry {i} needs 'contains' and 'response_model'")
                if "response" not in entry and "error" not in entry:
                    raise LLMError(f"cassette {self.path} entry {i} needs 'response' or 'error'")
            self._entries = data["entries"]
            self._mtime = mtime

    def call(self, messages: list[dict], response_model: str | None, subject: str | None) -> Reply:
        self._load()
        prompt = _prompt_text(messages)
        wanted = response_model or "text"
        for entry in self._entries:
            if entry["response_model"] not in ("*", wanted):
                continue
            if entry["contains"] not in prompt:
                continue
            if entry.get("delay_seconds"):
                time.sleep(float(entry["delay_seconds"]))  # simulated provider latency
            if "error" in entry:
                factory = _SIMULATED.get(entry["error"])
                if factory is None:
                    raise LLMError(f"cassette error {entry['error']!r}: expected one of {sorted(_SIMULATED)}")
                raise factory()
            response = entry["response"]
            text = response if isinstance(response, str) else json.dumps(response)
            return Reply(text, estimate_tokens(prompt), estimate_tokens(text))
        start = " ".join(prompt.split())[:160]
        raise CassetteMiss(f"no cassette entry for response_model {wanted!r}; prompt starts: {start!r}")


class OfflineProvider:
    """No model configured: a deterministic local extractor answers the extraction calls."""

    name = "offline"
    generates = False

    def call(self, messages: list[dict], response_model: str | None, subject: str | None) -> Reply:
        from engram.adapters.llm import offline

        handlers = {
            "ChunkExtraction": offline.offline_chunk_extraction,
            "KnowledgeGraph": offline.offline_graph,
            "SummarizedContent": offline.offline_summary,
            "ContradictionList": offline.offline_contradictions,
        }
        handler = handlers.get(response_model or "")
        if handler is None:
            raise LLMUnavailable(
                f"no LLM configured for {response_model or 'text completion'} "
                "(set ENGRAM_LLM_MODEL to a litellm model, or replay:<cassette.json>)"
            )
        source = subject if subject is not None else _prompt_text(messages)
        result = handler(source)
        text = result if isinstance(result, str) else json.dumps(
            result.model_dump() if hasattr(result, "model_dump") else result
        )
        return Reply(text, 0, 0)


def provider_from_settings(settings) -> Provider:
    model = settings.llm_model
    if not model or model == "offline":
        return OfflineProvider()
    if model.startswith("replay:"):
        return ReplayProvider(model[len("replay:") :])
    return LiteLLMProvider(model, settings.llm_api_key, settings.llm_api_base, settings.llm_timeout_seconds)
