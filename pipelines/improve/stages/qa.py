"""persist_session_qa: session QA becomes dataset memory, a small document per entry (node set
user_sessions), cognified in this stage so its LLM use counts against the run's budget."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from engram.models.payloads import RememberItem
from engram.pipelines.cognify.ingest import PreparedItem, prepare
from engram.pipelines.errors import BadInput
from engram.pipelines.flow import Published
from engram.pipelines.intake import Intake, admit

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


# ------------------------------------------------------------------ the stage


def load(uow, ctx) -> dict[str, list[dict]]:
    """Per session: its entries above the watermark, up to the run's snapshot."""
    current = {r["session_id"]: r["watermark_seq"] for r in uow.improve.sessions(ctx.dataset_id, ctx.session_ids)}
    out = {}
    for sid in ctx.session_ids:
        upto = ctx.snapshot["sessions"].get(sid, {}).get("upto", 0)
        entries = uow.sessions.window(ctx.dataset_id, sid, current.get(sid, 0), upto)
        if entries:
            out[sid] = entries
    return out


def gate(uow, ctx):
    return None if load(uow, ctx) else ("skipped", "no_new_entries")


def compute(windows: dict[str, list[dict]], ctx) -> dict:
    """Every entry's document (None: an unusable turn, counted and left in session memory)."""
    items = [document(ctx, sid, e) for sid, entries in windows.items() for e in entries]
    return {"items": [i for i in items if i is not None],
            "counts": {"entries": len(items), "documents": 0, "duplicates": 0, "rejected": items.count(None)}}


def publish(uow, ctx, windows: dict[str, list[dict]], result: dict) -> Published:
    """Admit every entry's document at once; the engine cognifies what that started, here, in order."""
    # This stage runs its entries' runs inline: a pending one was left by an earlier attempt.
    admission = admit(uow, Intake(ctx.dataset_id, result["items"], redelivered=True, node_sets=[NODE_SET],
                                  params={"improve_run": str(ctx.run_id)}))
    counts = dict(result["counts"], documents=len(admission.to_start),
                  duplicates=len(admission.items) - len(admission.to_start))
    return Published(tuple(admission.to_start), counts)


def persist(uow, ctx, windows: dict[str, list[dict]], counts: dict) -> dict:
    for sid in windows:
        uow.improve.advance_watermark(ctx.dataset_id, sid, ctx.snapshot["sessions"][sid]["upto"])
    return counts


def document(ctx, session_id: str, entry: dict) -> PreparedItem | None:
    """The entry's document, or None for an unusable turn (it never blocks the session; it stays
    in session memory)."""
    try:
        item = prepare(RememberItem(text=render_qa(session_id, entry), name=item_name(session_id, entry)),
                       ctx.settings.max_content_bytes, 0)
    except BadInput:
        return None
    return replace(item, source=f"session:{session_id}#{entry['id']}")
