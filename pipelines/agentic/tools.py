"""Tools the agent may call, and the one dispatcher (SPEC 8).

A tool is data (ToolSpec: name, description, arguments, permission, handler key). A handler
is code: it resolves only from an allow-list (built-ins plus what the host declared in code or
settings), never from an import path found in data, and it declares the least grant it needs.
A stored spec may ask for more, never less: the call needs the stronger of the two
(read < write < delete < share). Dispatch order: scope check, lookup, dataset permission,
handler. Scope, permission and invocation errors come back as a tool result "ERROR: ..." for
the model to read; anything else propagates (a database outage is a retry of the task, not a
message to the model).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

MAX_TOOL_OUTPUT = 8000
TRUNCATED = "\n... [truncated]"
PERMISSIONS = ("read", "write", "delete", "share")  # weakest first


def stronger(a: str, b: str) -> str:
    """The stronger of two permissions in the order of PERMISSIONS."""
    return max(a, b, key=PERMISSIONS.index)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    handler: str  # a key of the HandlerRegistry, never an import path
    arguments: Mapping[str, str] = field(default_factory=dict)  # argument name -> description
    required: tuple[str, ...] = ()
    permission: str = "read"  # the grant on the dataset the call needs

    def render(self) -> str:
        args = ", ".join(f"{n}{'' if n in self.required else '?'}: {d}" for n, d in self.arguments.items())
        return f"- {self.name}({args}) [needs {self.permission}]: {self.description}"


class ToolInvocationError(Exception):
    """A handler's way to say the call cannot run as asked (bad arguments, nothing to act on)."""


@dataclass
class ToolContext:
    """What a handler may touch: the one authorised dataset, for the caller, with their grants."""

    dataset: str
    user: str
    grants: frozenset[str]
    ports: Any  # duck-typed: recall(question, search_type, top_k) -> str, remember(text) -> str, skills


Handler = Callable[[ToolContext, dict[str, Any]], str]


class HandlerRegistry:
    """Allow-listed handlers by key, each with the least permission it needs. Keys come from
    code (built-ins, `register`) or settings (ENGRAM_AGENT_TOOLS)."""

    def __init__(self, handlers: Mapping[str, tuple[Handler, str]] | None = None) -> None:
        self._handlers: dict[str, Handler] = {}
        self._minimum: dict[str, str] = {}
        for key, (handler, permission) in (handlers or {}).items():
            self.register(key, handler, permission)

    def register(self, key: str, handler: Handler, permission: str = "read") -> None:
        if permission not in PERMISSIONS:
            raise ValueError(f"handler {key!r}: unknown permission {permission!r}; expected one of {PERMISSIONS}")
        self._handlers[key] = handler
        self._minimum[key] = permission

    def resolve(self, key: str) -> Handler | None:
        return self._handlers.get(key)

    def minimum(self, key: str) -> str | None:
        """The least permission the handler needs (None: not allow-listed)."""
        return self._minimum.get(key)

    def effective(self, spec: ToolSpec) -> ToolSpec:
        """The spec with the permission a call needs: the stronger of the spec's and its handler's."""
        floor = self.minimum(spec.handler)
        needed = spec.permission if floor is None else stronger(spec.permission, floor)
        return spec if needed == spec.permission else replace(spec, permission=needed)

    def __contains__(self, key: str) -> bool:
        return key in self._handlers


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATED


def call_key(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """Two calls are identical when tool and arguments are (argument order does not matter)."""
    return tool_name + json.dumps(arguments, sort_keys=True, default=str)


@dataclass
class Dispatcher:
    exposed: Mapping[str, ToolSpec]  # tools this task may call (after every filter)
    registry: HandlerRegistry
    context: ToolContext
    errors: tuple[type[BaseException], ...] = field(default=(ToolInvocationError,))

    def __call__(self, tool_name: str, arguments: Mapping[str, Any]) -> str:
        spec = self.exposed.get(tool_name)
        if spec is None:  # scope
            return f"ERROR: tool {tool_name!r} is not available to this task; use one of {sorted(self.exposed)}"
        handler = self.registry.resolve(spec.handler)
        if handler is None:  # lookup
            return f"ERROR: tool {tool_name!r} has no allow-listed handler ({spec.handler!r} is refused)"
        needed = self.registry.effective(spec).permission  # a stored spec never weakens its handler's
        if needed not in self.context.grants:  # dataset permission
            return (f"ERROR: tool {tool_name!r} needs {needed!r} on dataset "
                    f"{self.context.dataset!r}, which user {self.context.user!r} does not have")
        unknown = sorted(set(arguments) - set(spec.arguments))
        missing = [n for n in spec.required if n not in arguments]
        if unknown or missing:
            return (f"ERROR: tool {tool_name!r} takes arguments {sorted(spec.arguments)}"
                    + (f"; unknown {unknown}" if unknown else "") + (f"; missing {missing}" if missing else ""))
        try:
            output = handler(self.context, dict(arguments))
        except self.errors as exc:
            return f"ERROR: tool {tool_name!r} failed: {exc}"
        return truncate(str(output), MAX_TOOL_OUTPUT)


def exposed_tools(available: Iterable[ToolSpec], caller_filter: Iterable[str] | None,
                  skill_tools: Iterable[str] | None) -> dict[str, ToolSpec]:
    """Built-in and registered tools ∩ the caller's filter ∩ (skills' declared tools + load_skill).

    `skill_tools` None means no skill narrows the set (no skills defined)."""
    tools = {t.name: t for t in available}
    if caller_filter is not None:
        wanted = set(caller_filter)
        tools = {n: t for n, t in tools.items() if n in wanted}
    if skill_tools is not None:
        allowed = set(skill_tools) | {"load_skill"}
        tools = {n: t for n, t in tools.items() if n in allowed}
    return tools


def host_tool(name: str, description: str, arguments: Mapping[str, str] | None = None,
              required: tuple[str, ...] = (), permission: str = "read") -> Callable[[Handler], Handler]:
    """Mark a host function as a tool; list it as "module:function" in ENGRAM_AGENT_TOOLS to
    allow-list it. The handler receives (ToolContext, arguments) and returns text."""

    def mark(fn: Handler) -> Handler:
        fn.tool_spec = {"name": name, "description": description, "arguments": dict(arguments or {}),  # type: ignore[attr-defined]
                        "required": tuple(required), "permission": permission}
        return fn

    return mark


def host_tools(paths: Iterable[str], importer: Callable[[str], Handler]) -> tuple[HandlerRegistry, list[ToolSpec]]:
    """Built-in handlers plus the host's allow-listed ones, and the specs of the host's tools."""
    from engram.pipelines.agentic.builtins import builtin_registry

    registry, specs = builtin_registry(), []
    for path in paths:
        handler = importer(path)
        spec = getattr(handler, "tool_spec", None)
        if not isinstance(spec, dict):
            raise ValueError(f"{path} is not marked with @host_tool(...)")
        registry.register(path, handler, spec["permission"])  # its @host_tool permission is its least
        specs.append(ToolSpec(spec["name"], spec["description"], path, spec["arguments"], spec["required"],
                              spec["permission"]))
    return registry, specs
