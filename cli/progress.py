"""Rich rendering for the CLI: per-stage progress bars and recall results."""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from engram.models.payloads import RecallResult, RunStatus
from engram.pipelines.cognify.flow import COGNIFY


def follow_runs(console: Console, runs, timeout: float = 3600.0, poll: float = 0.3) -> list[RunStatus]:
    """One bar per stage: how many of the runs have passed it."""
    stages = COGNIFY.stages_for({})
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


def render_recall(console: Console, result: RecallResult, superseded_label: str = "superseded") -> None:
    head = f"[bold]{result.search_type}[/bold]"
    if result.routed:
        head += f" (routed, score {result.route_score})"
    if result.fallback_from:
        head += f" (fallback from {result.fallback_from})"
    if result.datasets:
        head += f"  datasets: {', '.join(result.datasets)}"
    if result.sources:
        head += f"  sources: {', '.join(result.sources)}"
    console.print(head)
    if result.note:
        console.print(f"[dim]{escape(result.note)}[/dim]")
    if not result.items:
        console.print("[yellow]nothing found[/yellow]")
    for rank, item in enumerate(result.items, 1):
        p = item.provenance
        source = p.title or (str(p.document_id)[:8] if p.document_id else "")
        flags = f" [yellow]({superseded_label})[/yellow]" if item.superseded else ""
        style = "bold green" if item.kind == "answer" else "cyan"
        console.print(f"{rank:>2}. [{style}]\\[{item.kind}][/{style}] {item.score:.3f}{flags}  "
                      f"{escape(item.text.strip()[:300])}")
        where = ", ".join(x for x in [
            p.dataset and f"dataset {p.dataset}",
            source and f"document {escape(source)}",
            p.chunk_ids and f"chunks {','.join(str(c)[:8] for c in p.chunk_ids[:3])}"
            + (f" (+{len(p.chunk_ids) - 3})" if len(p.chunk_ids) > 3 else ""),
            p.edge_ids and f"edges {','.join(str(e)[:8] for e in p.edge_ids[:3])}"
            + (f" (+{len(p.edge_ids) - 3})" if len(p.edge_ids) > 3 else ""),
        ] if x)
        if where:
            console.print(f"     [dim]{where}[/dim]")
        for stale in item.superseded_facts:
            by = f"replaced by {stale['by']}" if stale.get("by") else f"over since {stale.get('until')}"
            console.print(f"     [yellow]states[/yellow] {escape(str(stale.get('fact')))}, {escape(by)}")
        for conflict in item.conflicts:
            console.print(f"     [red]conflicts with:[/red] {escape(str(conflict.get('fact')))} "
                          f"({escape(str(conflict.get('reason')))}, confidence {conflict.get('confidence')})")


def render_eval(console: Console, report: dict, out) -> None:
    table = Table("#", "question", "gold", "EM", "F1", f"in ctx@{report['k']}", "top document")
    for n, row in enumerate(report["questions"], 1):
        table.add_row(str(n), escape(row["question"][:60]), escape(str(row["answer"])[:30]),
                      f"{row['exact_match']:.0f}", f"{row['f1']:.2f}", "yes" if row["answer_in_context"] else "no",
                      escape(row.get("error") or str((row.get("top_titles") or [""])[0] or "")))
    console.print(table)
    m, k = report["metrics"], report["k"]
    mode = "generated answers" if m["generated"] else "top context (no LLM answer)"
    console.print(f"[bold]EM {m['exact_match']:.3f}  F1 {m['f1']:.3f}  "
                  f"answer-in-context@{k} {m[f'answer_in_context@{k}']:.3f}[/bold]"
                  f"  over {m['count']} questions ({mode}; {m['errors']} errors)")
    console.print(f"report: {out}")
