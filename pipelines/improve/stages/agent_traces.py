"""persist_agent_traces: the agent-memory decorator's traces (SPEC 8b) become entries of their
session, so session recall, persist_session_qa and distillation see them like remembered turns.

A trace's entry: question = the caller's words (the text values of the call's arguments), answer
= the return value or `ERROR: <error>`, context = the memory the call was shown, at the trace's
time. Its id comes from the trace id, so a trace is stored once however often the stage runs;
the session's trace watermark (`seq`) moves over what was taken. A failed call's entry has
confidence 0.5, below distillation's 0.75: an error is no answer to learn from (its recurrence is
extract_agent_context's business). Traces without a session, or whose user is gone, stay traces.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from engram.pipelines.ids import trace_entry_id
from engram.pipelines.relative_dates import dates_said

FAILED_CONFIDENCE = 0.5
NO_NEW_TRACES = "no_new_traces"
_QUOTED = re.compile(r"""'((?:[^'\\]|\\.)*)(?:'|$)|"((?:[^"\\]|\\.)*)(?:"|$)""")  # a cut repr ends open


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [s for v in value for s in _strings(v)]
    return []


def user_words(inputs: str | None) -> str:
    """The text the caller passed: string arguments of the stored `{'args': ..., 'kwargs': ...}`
    (a repr, maybe cut); quoted strings when it does not parse; else the inputs as stored."""
    inputs = inputs or ""
    try:
        found = _strings(ast.literal_eval(inputs))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        found = [a or b for a, b in _QUOTED.findall(inputs)]
        found = [s.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"') for s in found]
        found = [s for s in found if s.strip() and s not in ("args", "kwargs")]
    return "\n".join(found) if found else inputs


def entry_of(trace: Mapping) -> dict:
    """The session entry of one trace (keyword arguments of SessionRepository.add_entry)."""
    question = user_words(trace["inputs"])
    answer = f"ERROR: {trace['error']}" if trace.get("error") else (trace.get("result") or "")
    at = trace["created_at"]
    return {"entry_id": trace_entry_id(trace["id"]), "dataset_id": trace["dataset_id"],
            "session_id": trace["session_id"], "user_id": trace["user_id"], "question": question,
            "answer": answer, "context": trace.get("memory") or "",
            "confidence": FAILED_CONFIDENCE if trace.get("error") else 1.0,
            "occurred_at": at, "dates": dates_said({"question": question, "answer": answer}, at)}


# ------------------------------------------------------------------ the stage


def window_bounds(ctx, sid: str, key: str, marks: Mapping[str, Mapping[str, int]]) -> tuple[int, int]:
    """(after, upto) of a session's traces for the watermark `key` (persist | context): above the
    watermark, up to the run's snapshot."""
    upto = (ctx.snapshot.get("sessions", {}).get(sid, {}).get("traces") or {}).get("upto", 0)
    return marks[sid][key], upto


def load(uow, ctx) -> dict[str, dict]:
    marks = uow.agentic.trace_watermarks(ctx.dataset_id, ctx.session_ids)
    out = {}
    for sid in ctx.session_ids:
        after, upto = window_bounds(ctx, sid, "persist", marks)
        traces = uow.agentic.trace_window(ctx.dataset_id, sid, after, upto) if upto > after else []
        if traces:
            out[sid] = {"upto": upto, "traces": traces}
    return out


def gate(uow, ctx):
    return None if load(uow, ctx) else ("skipped", NO_NEW_TRACES)


def compute(windows: dict[str, dict], ctx) -> dict[str, list[dict]]:
    return {sid: [entry_of(t) for t in w["traces"] if t["user_id"] is not None] for sid, w in windows.items()}


def persist(uow, ctx, windows: dict[str, dict], entries: dict[str, list[dict]]) -> dict:
    counts = {"traces": 0, "entries": 0, "without_user": 0}
    for sid, window in windows.items():
        for e in entries[sid]:
            if uow.sessions.entry(e["entry_id"]) is None:
                uow.sessions.add_entry(**e)
                counts["entries"] += 1
        counts["traces"] += len(window["traces"])
        counts["without_user"] += len(window["traces"]) - len(entries[sid])
        uow.agentic.advance_trace_watermarks(ctx.dataset_id, sid, persist=window["upto"])
    return counts

