"""Agent memory for producer functions (SPEC 8b): a decorator, client-side only.

    from celery import Celery
    from engram.tasks.agent_memory import agent_memory, memory_prompt

    app = Celery(broker="redis://127.0.0.1:6379/0", backend="redis://127.0.0.1:6379/0")

    @agent_memory(app, dataset="support-kb", user="alice", session_id="chat-42")
    async def answer(question: str) -> str:
        return await my_llm(memory_prompt(question))

Before each call it fetches bounded memory (graph top_k facts and the last n traces of the
session) with one `engram.agent.memory` task; inside the call `current_memory()` and
`memory_prompt(text)` see that call's memory only (a context variable: concurrent calls never
share a frame). After the call it enqueues `engram.agent.trace` (inputs, the memory shown, the
sanitised return value or the error) and does not wait for it. A failed or slow retrieval means
empty memory, never a failed host call. Importing this module starts nothing and connects nowhere.

With `inject=True` the memory also reaches litellm calls made inside the decorated call without
`memory_prompt()`: a litellm callback (adapters/llm/memory_injection.py, registered once in
`litellm.callbacks`) reads the call's frame and prepends the memory to the last user message of
every `litellm.acompletion` request (litellm runs request-changing callbacks on its async path
only).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from engram.adapters.llm.memory_injection import install

log = logging.getLogger("engram.agent_memory")

MEMORY_TASK = "engram.agent.memory"
TRACE_TASK = "engram.agent.trace"
MAX_TRACE_CHARS = 4000
_frame: contextvars.ContextVar[Frame | None] = contextvars.ContextVar("engram_agent_memory", default=None)


@dataclass(frozen=True)
class Frame:
    user: str
    dataset: str
    session_id: str | None
    memory: str
    inject: bool = False  # litellm calls inside the decorated call get the memory (opt-in)


def current_memory() -> str:
    """The memory fetched for the decorated call running in this context ("" outside one)."""
    frame = _frame.get()
    return frame.memory if frame else ""


def memory_prompt(original_input: str) -> str:
    """The input an LLM call inside the decorated function should send (SPEC 8b)."""
    memory = current_memory()
    if not memory:
        return original_input
    return f"Additional Memory Context:\n{memory}\n\nOriginal Input:\n{original_input}"


MEMORY_HEADER = "Additional Memory Context:\n"


def inject_memory(messages: list, memory: str) -> list:
    """The messages with the memory prepended to the last user message (as `memory_prompt` does),
    or as a first system message when there is none; the caller's list and dicts are not changed."""
    if not memory:
        return messages
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        m = out[i]
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                if content.startswith(MEMORY_HEADER):  # the host already used memory_prompt()
                    return messages
                out[i] = {**m, "content": f"{MEMORY_HEADER}{memory}\n\nOriginal Input:\n{content}"}
                return out
            if isinstance(content, list):
                note = {"type": "text", "text": f"{MEMORY_HEADER}{memory}\n\nOriginal Input:"}
                out[i] = {**m, "content": [note, *content]}
                return out
            break
    return [{"role": "system", "content": f"{MEMORY_HEADER}{memory}"}, *out]


def _injected_memory() -> str | None:
    """The memory a litellm call running in this context gets (decorated with inject=True)."""
    frame = _frame.get()
    return frame.memory if frame is not None and frame.inject and frame.memory else None


def install_injection():
    """Register the litellm callback that injects the decorated call's memory (idempotent)."""
    return install(_injected_memory, inject_memory)


def _sanitise(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text[:MAX_TRACE_CHARS]


def _resolve(value: str | Callable[..., str] | None, args: tuple, kwargs: dict) -> str | None:
    return value(*args, **kwargs) if callable(value) else value


def agent_memory(app, *, dataset: str | Callable[..., str], user: str | Callable[..., str] = "default",
                 session_id: str | Callable[..., str] | None = None, top_k: int = 5, last_traces: int = 3,
                 timeout: float = 5.0, query: Callable[..., str] | None = None, inject: bool = False):
    """Decorate a sync or async agent function. `dataset`, `user`, `session_id` and `query` may be
    callables receiving the call's arguments; the default query is the first argument as text.
    `inject`: litellm async calls made inside the call get the memory prepended (see above)."""
    if inject:
        install_injection()
    fetch = functools.partial(_fetch_frame, app, dataset=dataset, user=user, session_id=session_id, top_k=top_k,
                              last_traces=last_traces, timeout=timeout, query=query, inject=inject)
    store = functools.partial(_store_trace, app)

    def decorate(fn):
        return _wrapped(fn, fetch, store)

    return decorate


def _fetch_frame(app, frame_args: tuple, frame_kwargs: dict, *, dataset, user, session_id, top_k: int,
                 last_traces: int, timeout: float, query, inject: bool) -> Frame:
    """The call's frame: who, where, which session, and the memory retrieved for it ("" on failure)."""
    who = _resolve(user, frame_args, frame_kwargs) or "default"
    where = _resolve(dataset, frame_args, frame_kwargs)
    session = _resolve(session_id, frame_args, frame_kwargs)
    text = query(*frame_args, **frame_kwargs) if query else (str(frame_args[0]) if frame_args else "")
    memory = ""
    try:
        reply = app.send_task(MEMORY_TASK, kwargs={
            "user": who, "dataset": where, "session_id": session, "query": text,
            "top_k": top_k, "last_traces": last_traces}).get(timeout=timeout)
        memory = str(reply.get("memory") or "") if isinstance(reply, dict) else ""
    except Exception as exc:  # retrieval never breaks the host call
        log.warning("agent memory: retrieval failed, continuing without memory: %s", exc)
    if inject:
        install_injection()  # again: the host may have replaced litellm.callbacks since
    return Frame(who, where, session, memory, inject)


def _store_trace(app, frame: Frame, fn_name: str, args: tuple, kwargs: dict, result: Any,
                 error: BaseException | None) -> None:
    """Enqueue the call's trace (never awaited; a failure to enqueue is logged, not raised)."""
    payload = {"trace_id": str(uuid.uuid4()), "user": frame.user, "dataset": frame.dataset,
               "session_id": frame.session_id, "function": fn_name,
               "inputs": _sanitise({"args": args, "kwargs": kwargs}),
               "memory": frame.memory[:MAX_TRACE_CHARS] or None,
               "result": None if error else _sanitise(result),
               "error": f"{type(error).__name__}: {error}" if error else None}
    try:
        app.send_task(TRACE_TASK, kwargs=payload)  # enqueued, never awaited
    except Exception as exc:
        log.warning("agent memory: could not enqueue the trace: %s", exc)


def _wrapped(fn, fetch: Callable[[tuple, dict], Frame], store: Callable[..., None]):
    """`fn` (sync or async) run inside its frame, its trace stored after it returns or raises."""
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "agent"))
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args, **kwargs):
            frame = await asyncio.to_thread(fetch, args, kwargs)
            token = _frame.set(frame)
            try:
                result = await fn(*args, **kwargs)
            except BaseException as exc:
                await asyncio.to_thread(store, frame, name, args, kwargs, None, exc)
                raise
            finally:
                _frame.reset(token)
            await asyncio.to_thread(store, frame, name, args, kwargs, result, None)
            return result
        return async_wrapper

    @functools.wraps(fn)
    def sync_wrapper(*args, **kwargs):
        frame = fetch(args, kwargs)
        token = _frame.set(frame)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            store(frame, name, args, kwargs, None, exc)
            raise
        finally:
            _frame.reset(token)
        store(frame, name, args, kwargs, result, None)
        return result
    return sync_wrapper
