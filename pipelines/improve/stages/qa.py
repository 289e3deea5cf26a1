"""persist_session_qa: session QA becomes dataset memory, a small document per entry (node set
user_sessions), cognified in this stage so its LLM use counts against the run's budget."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from engram.models.payloads import RememberItem
from engram.pipelines.cognify.flow import open_run
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput

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
    """Add each entry's document (fenced), then cognify the new ones here, in order."""
    counts = {"entries": 0, "documents": 0, "duplicates": 0, "rejected": 0}
    to_cognify: list[tuple[uuid.UUID, list[str]]] = []
    with ctx.ports.write() as uow:
        for sid, entries in windows.items():
            for e in entries:
                counts["entries"] += 1
                added = add_entry(uow, ctx, sid, e)
                if added is None:
                    counts["rejected"] += 1
                elif added[1]:
                    to_cognify.append(added)
                else:
                    counts["duplicates"] += 1
    for run_id, stages in to_cognify:
        ctx.ports.cognify(run_id, stages)
        counts["documents"] += 1
    return counts


def persist(uow, ctx, windows: dict[str, list[dict]], counts: dict) -> dict:
    for sid in windows:
        uow.improve.advance_watermark(ctx.dataset_id, sid, ctx.snapshot["sessions"][sid]["upto"])
    return counts


def add_entry(uow, ctx, session_id: str, entry: dict) -> tuple[uuid.UUID, list[str]] | None:
    """The entry's document and the cognify stages still to run ([] = already memory)."""
    try:
        item = prepare(RememberItem(text=render_qa(session_id, entry), name=item_name(session_id, entry)),
                       ctx.settings.max_content_bytes, 0)
    except BadInput:
        return None  # an unusable turn never blocks the session; it stays in session memory
    item_id, created = uow.graph.add_item(
        ctx.dataset_id, item.digest, item.text, name=item.name, mime=item.mime,
        source=f"session:{session_id}#{entry['id']}", node_sets=[NODE_SET])
    previous = None if created else uow.runs.latest_for_item(item_id)
    if previous is None:
        run_id = uuid.uuid4()
        return run_id, open_run(uow, run_id, ctx.dataset_id, item_id, options={},
                                params={"doc_type": item.doc_type, "name": item.name, "improve_run": str(ctx.run_id)})
    if previous["status"] == "completed":
        return previous["id"], []
    if previous["status"] == "failed":
        return previous["id"], uow.runs.reopen(previous["id"])
    # Left unfinished by an earlier attempt (or a holder that lost its claim): finish it here.
    return previous["id"], [s["stage"] for s in uow.runs.stages(previous["id"])
                            if s["status"] not in ("completed", "skipped")]
