"""The litellm side of the agent-memory decorator's opt-in injection (tasks/agent_memory.py):
one callback in `litellm.callbacks` that asks `memory_of()` (the decorator's context variable)
for the running call's memory and prepends it to the request's messages. litellm runs
request-changing callbacks (`async_pre_call_deployment_hook`) on its async path only, so
`litellm.acompletion` calls are covered; a synchronous `litellm.completion` is not.
"""

from __future__ import annotations

from collections.abc import Callable

_installed: dict[int, object] = {}


def install(memory_of: Callable[[], str | None], inject: Callable[[list, str], list]):
    """Register the callback once per `memory_of` (again if the host replaced litellm.callbacks)."""
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    callback = _installed.get(id(memory_of))
    if callback is None:
        class MemoryInjection(CustomLogger):
            """Outside a decorated call with injection on, a request passes unchanged."""

            async def async_pre_call_deployment_hook(self, kwargs, call_type):
                memory = memory_of()
                messages = kwargs.get("messages")
                if not memory or not isinstance(messages, list):
                    return None
                return {**kwargs, "messages": inject(messages, memory)}

        callback = _installed[id(memory_of)] = MemoryInjection()
    if not any(cb is callback for cb in litellm.callbacks):
        litellm.callbacks.append(callback)
    return callback
