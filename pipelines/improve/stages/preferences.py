"""update_user_preferences (opt-in): preference statements a user made in session entries.

Deterministic (works offline): a sentence of the user's own words (the entry's question) that
states a preference ("I prefer …", "please always …", "my favourite …") is kept, once per
(dataset, user, normalised statement), and published as a small document in node sets
["user_preferences", "user_preferences:{user}"] so recall finds it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping

from engram.models.payloads import RememberItem
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.flow import Published
from engram.pipelines.ids import preference_id, preference_key

NODE_SET = "user_preferences"
MAX_CHARS = 300
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
PREFERENCE_CUES = re.compile(
    r"\b(i|we)\s+(really\s+)?(prefer|like|love|want|need|hate|dislike|always|never|usually|don'?t\s+like|do\s+not\s+like"
    r"|would\s+rather)\b"
    r"|\bplease\s+(always|never|use|avoid|keep|reply|answer|write|call|send|don'?t)\b"
    r"|\bmy\s+(favou?rite|preferred)\b",
    re.IGNORECASE,
)


def statements(text: str | None) -> list[str]:
    """The preference sentences of one user message, in order, without duplicates."""
    out: dict[str, str] = {}
    for sentence in _SENTENCE.split(text or ""):
        sentence = re.sub(r"\s+", " ", sentence).strip()
        if sentence and PREFERENCE_CUES.search(sentence):
            out.setdefault(preference_key(sentence), sentence[:MAX_CHARS])
    return list(out.values())


def extract(dataset_id: uuid.UUID, session_id: str, entries: Iterable[Mapping]) -> list[dict]:
    """Preference rows of the entries that have a user: id, dataset, user, session, statement, entry."""
    rows: dict[uuid.UUID, dict] = {}
    for e in sorted(entries, key=lambda e: e["seq"]):
        if e.get("user_id") is None:
            continue
        for s in statements(e.get("question")):
            pid = preference_id(dataset_id, e["user_id"], s)
            rows.setdefault(pid, {"id": pid, "dataset_id": dataset_id, "user_id": e["user_id"],
                                  "session_id": session_id, "statement": s, "entry_id": e["id"]})
    return list(rows.values())


def render(user_name: str, statement: str) -> str:
    return f"# User preference ({user_name})\n\n{user_name} said: {statement}\n"


def node_sets(user_name: str) -> list[str]:
    return [NODE_SET, f"{NODE_SET}:{user_name}"]


# ------------------------------------------------------------------ the stage


def load(uow, ctx) -> dict[str, list[dict]]:
    """The run's window of each session (the entries persist_session_qa took in)."""
    out = {}
    for sid in ctx.session_ids:
        w = ctx.snapshot.get("sessions", {}).get(sid, {})
        entries = uow.sessions.window(ctx.dataset_id, sid, w.get("from", 0), w.get("upto", 0))
        if entries:
            out[sid] = entries
    return out


def gate(uow, ctx):
    return None if load(uow, ctx) else ("skipped", "no_new_entries")


def compute(windows: dict[str, list[dict]], ctx) -> list[dict]:
    """The preference statements of the run's windows (rows to store, once each)."""
    return [row for sid, entries in windows.items() for row in extract(ctx.dataset_id, sid, entries)]


def publish(uow, ctx, windows: dict[str, list[dict]], found: list[dict]) -> Published:
    """Store the new statements, each published once as a document; the engine cognifies them here."""
    names = uow.learning.user_names({r["user_id"] for r in found})
    added = uow.learning.add_preferences(found)
    to_cognify = []
    for row in added:
        name = names.get(row["user_id"], str(row["user_id"]))
        item = prepare(RememberItem(text=render(name, row["statement"]), name=f"preference-{row['id']}.md"),
                       ctx.settings.max_content_bytes, 0)
        started = ctx.ports.add_document(uow, item, source=f"session:{row['session_id']}#{row['entry_id']}",
                                         node_sets=node_sets(name))
        if started[2]:
            to_cognify.append(started[1:])
    return Published(tuple(to_cognify), {"statements": len(found), "new": len(added), "documents": len(to_cognify)})
