"""Rendering for `engram improve`, `engram sessions` and `engram feedback`."""

from __future__ import annotations

import time

from rich.console import Console
from rich.table import Table


def wait_for_run(client, run_id: str, timeout: float = 600.0, poll: float = 0.5, user: str = "default") -> dict:
    """Poll an improve run until it leaves `running`."""
    deadline = time.monotonic() + timeout
    while True:
        run = client.improve_run(run_id, user=user)
        if run["status"] != "running" or time.monotonic() > deadline:
            return run
        time.sleep(poll)


def render_run(console: Console, run: dict) -> None:
    console.print(f"improve run [bold]{run['run_id']}[/bold] pass {run['pass']} ({run['trigger']}): "
                  f"[bold]{run['status']}[/bold], fence {run['fence']}, {run['llm_calls']} LLM calls")
    table = Table("stage", "status", "reason / error", "counts")
    for s in run["stages"]:
        detail = s["error"] or s["reason"] or ""
        counts = ", ".join(f"{k}={v}" for k, v in (s["counts"] or {}).items())
        table.add_row(s["stage"], s["status"], detail, counts)
    console.print(table)


def _holder(claim: dict | None) -> str:
    if not claim:
        return ""
    return f"fence {claim.get('fence')} {claim.get('host', '?')}:{claim.get('pid', '?')} ({claim.get('trigger', '')})"


def render_sessions(console: Console, view: dict) -> None:
    console.print(f"dataset [bold]{view['dataset']}[/bold]"
                  + (f" — dataset claim held: {_holder(view['dataset_claim'])}" if view["dataset_claim"] else ""))
    table = Table("session", "entries", "pending", "feedback", "watermark", "last improve", "rerun",
                  "claim holder", "last run")
    for s in view["sessions"]:
        last = s["runs"][0] if s["runs"] else None
        table.add_row(
            s["session_id"], str(s["entries"]), str(s["pending_entries"]), str(s["pending_feedback"]),
            str(s["watermark_seq"]), (s["last_improve_at"] or "never")[:19], "yes" if s["rerun_requested"] else "",
            _holder(s["session_claim"]), f"{last['status']} ({last['trigger']})" if last else "",
        )
    console.print(table)


def render_learning(console: Console, view: dict) -> None:
    """Lessons each session published and the writer's rejected decisions, with their reasons."""
    for s in view["sessions"]:
        if not s.get("lessons") and not s.get("decisions"):
            continue
        console.print(f"session [bold]{s['session_id']}[/bold]: distillation watermark {s['distill_watermark_seq']}")
        table = Table("decision", "statement", "entries")
        for x in s["decisions"]:
            verdict = "accepted" if x["accepted"] else f"rejected: {x['reason']}" if not x["error"] else "call failed"
            table.add_row(verdict, x["statement"] or x["working_statement"], str(len(x["entry_ids"])))
        console.print(table)
