"""Built-in tools: search this dataset's memory, open a skill, remember a note (write grant).

Handlers reach only `ToolContext.dataset`, the one dataset the task authorised; no argument
can name another, so a tool never reads what the caller may not.
"""

from __future__ import annotations

from typing import Any

from engram.pipelines.agentic.skills import SkillError, skill_page
from engram.pipelines.agentic.tools import HandlerRegistry, ToolContext, ToolInvocationError, ToolSpec
from engram.pipelines.recall.registry import AGENT_SEARCH_DEFAULT
from engram.pipelines.recall.registry import AGENT_SEARCHABLE as SEARCHABLE
MAX_NOTE_CHARS = 20_000


def _int(arguments: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = arguments.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ToolInvocationError(f"{name} must be an integer in {low}..{high}, not {value!r}")
    return value


def search_memory(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolInvocationError("query must be a non-blank string")
    search_type = arguments.get("search_type", AGENT_SEARCH_DEFAULT)
    if search_type not in SEARCHABLE:
        raise ToolInvocationError(f"search_type must be one of {list(SEARCHABLE)}, not {search_type!r}")
    return ctx.ports.recall(query, search_type, _int(arguments, "top_k", 5, 1, 20))


def load_skill(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    skill = ctx.ports.skills.get(arguments.get("name"))
    if skill is None:
        raise ToolInvocationError(f"no skill named {arguments.get('name')!r}; see # Available skills")
    try:
        return skill_page(skill, _int(arguments, "page", 1, 1, 10_000))
    except SkillError as exc:
        raise ToolInvocationError(str(exc)) from exc


def remember_note(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    text = arguments.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_NOTE_CHARS:
        raise ToolInvocationError(f"text must be a non-blank string of at most {MAX_NOTE_CHARS} characters")
    return ctx.ports.remember(text)


BUILTIN_TOOLS = (
    ToolSpec("search_memory", "search this dataset's memory", "builtin:search_memory",
             {"query": "what to look for", "search_type": f"one of {', '.join(SEARCHABLE)} (default {AGENT_SEARCH_DEFAULT})",
              "top_k": "how many items, 1..20 (default 5)"}, ("query",), "read"),
    ToolSpec("load_skill", "open a skill's procedure (long ones in pages)", "builtin:load_skill",
             {"name": "the skill's name", "page": "page number, from 1 (default 1)"}, ("name",), "read"),
    ToolSpec("remember_note", "store a note in this dataset's memory", "builtin:remember_note",
             {"text": "the note"}, ("text",), "write"),
)


# Each built-in handler with the least grant it needs; a stored tool on it may ask more, never less.
BUILTIN_HANDLERS = {"builtin:search_memory": (search_memory, "read"), "builtin:load_skill": (load_skill, "read"),
                    "builtin:remember_note": (remember_note, "write")}


def builtin_registry() -> HandlerRegistry:
    return HandlerRegistry(BUILTIN_HANDLERS)
