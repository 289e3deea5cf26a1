"""Rich rendering for the CLI: per-stage progress bars and recall results."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engram.models.payloads import RecallResult, RunStatus
from engram.pipelines.cognify.pipeline import BASE_STAGES


def follow_runs(console: Console, runs, timeout: float = 3600.0, poll: float = 0.3) -> list[RunStatus]:
    """One bar per stage: how many of the runs have passed it."""
    stages = BASE_STAGES
    latest: dict = {}
    with Progress(TextColumn("{task.description:<30}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        bars = {s: progress.add_task(s, total=len(runs)) for s in stages}
        deadline = time.monotonic() + timeout
        while True:
            for run in runs:
                status = latest.get(run.run_id)
                if status is None or not status.done:
                    latest[run.run_id] = run.status()
            for stage in stages:
                done = sum(1 for st in latest.values() for s in st.stages
                           if s.stage == stage and s.status in ("completed", "skipped", "failed"))
                progress.update(bars[stage], completed=done)
            if all(s.done for s in latest.values()) or time.monotonic() > deadline:
                return list(latest.values())
            time.sleep(poll)


def render_recall(console: Console, result: RecallResult) -> None:
    head = f"[bold]{result.search_type}[/bold]"
    if result.routed:
        head += f" (routed, score {result.route_score})"
    console.print(head)
    if result.note:
        console.print(f"[dim]{result.note}[/dim]")
    for rank, item in enumerate(result.items, 1):
        p = item.provenance
        source = p.title or (str(p.document_id)[:8] if p.document_id else "")
        flags = " [yellow](superseded)[/yellow]" if item.superseded else ""
        console.print(f"{rank:>2}. [{item.kind}] {item.score:.3f}{flags}  {item.text.strip()[:300]}")
        where = ", ".join(x for x in [p.dataset and f"dataset {p.dataset}", source and f"document {source}",
                                      p.chunk_ids and f"chunks {','.join(str(c)[:8] for c in p.chunk_ids[:3])}"] if x)
        if where:
            console.print(f"     [dim]{where}[/dim]")
        for conflict in item.conflicts:
            console.print(f"     [red]conflicts with:[/red] {conflict.get('fact')} ({conflict.get('reason')})")
