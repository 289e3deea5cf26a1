"""LLM failures, split by what a task should do about them."""


class LLMError(RuntimeError):
    pass


class LLMTransientError(LLMError):
    """Timeout, rate limit, connection or server error: retry with backoff."""


class LLMInvalidOutput(LLMError):
    """The model kept answering outside the schema after the bounded re-asks: fail the stage."""


class LLMUnavailable(LLMError):
    """No model can answer this kind of call (offline default): callers fall back."""


class CassetteMiss(LLMError):
    """A replay cassette has no entry for this call."""
