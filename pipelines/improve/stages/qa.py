"""persist_session_qa: a session turn rendered as a small document for cognify."""

from __future__ import annotations

from collections.abc import Mapping

NODE_SET = "user_sessions"


def render_qa(session_id: str, entry: Mapping) -> str:
    parts = [f"# Session QA (session {session_id})", ""]
    if entry.get("question"):
        parts += [f"Question: {entry['question'].strip()}", ""]
    if entry.get("answer"):
        parts += [f"Answer: {entry['answer'].strip()}", ""]
    if entry.get("context"):
        parts += [f"Context: {entry['context'].strip()}", ""]
    return "\n".join(parts).rstrip() + "\n"


def item_name(session_id: str, entry: Mapping) -> str:
    return f"session-{session_id}-{entry['seq']}.md"
