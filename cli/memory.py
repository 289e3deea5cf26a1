"""`engram` commands: remember, status, recall, eval and demo: memory from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from engram.cli.app import fail, app, console, prepare_services, task_failed
from engram.cli.demo import DEMO_QA, run_demo
from engram.cli.progress import follow_runs, render_eval, render_recall
from engram.pipelines.recall.evaluate import BadQAFile, evaluate, load_qa
from engram.tasks.client import EngramClient, EngramError
import sys


def _texts_and_paths(targets: list[str], text: str | None) -> tuple[list[str], list[Path]]:
    """What `remember` was given, checked before anything is sent: every path exists, no
    argument is empty; text comes from --text or stdin ('-', or piped with no target)."""
    texts, paths = [], []
    literal = "literal text goes through --text 'TEXT' or stdin"
    if text is not None:
        if not text.strip():
            fail("--text is empty", "give the text to remember: --text 'Alice Moreau is the CEO'")
        texts.append(text)
    for target in targets:
        if target == "-":
            texts.append(_stdin(sys.stdin))
        elif not target.strip():
            fail("an empty argument is not a file or directory", f"name a file or directory; {literal}")
        elif not Path(target).exists():
            fail(f"no such file or directory: {target}", f"check the path; {literal}")
        else:
            paths.append(Path(target))
    if not texts and not paths:
        if sys.stdin is None or sys.stdin.isatty():
            fail("nothing to remember", f"name files or directories; {literal}")
        texts.append(_stdin(sys.stdin))
    return texts, paths


def _stdin(stream) -> str:
    data = stream.read() if stream is not None else ""
    if not data.strip():
        fail("stdin holds no text", "pipe the text in (echo 'TEXT' | engram remember -d DATASET) or use --text")
    return data


@app.command()
def remember(
    targets: list[str] = typer.Argument(None, help="files or directories; '-' reads text from stdin"),
    dataset: str = typer.Option(..., "--dataset", "-d"),
    text: str = typer.Option(None, "--text", help="literal text to remember"),
    user: str = typer.Option("default"),
    wait: bool = typer.Option(False, "--wait", help="block until every run finishes"),
) -> None:
    """Remember files, directories or text (--text, or stdin); with --wait, show per-stage progress."""
    texts, paths = _texts_and_paths(targets or [], text)
    prepare_services()

    client = EngramClient(local_reads=True)
    try:
        handle = client.remember(dataset=dataset, user=user, items=[{"text": t} for t in texts], paths=paths)
    except EngramError as exc:
        task_failed(exc)
    console.print(f"accepted {len(handle.runs)} item(s) into dataset [bold]{dataset}[/bold]")
    if not wait:
        for run in handle.runs:
            console.print(f"  run {run.run_id}  {run.name or ''}{'  (duplicate)' if run.duplicate else ''}")
        return

    statuses = follow_runs(console, handle.runs)
    failed = [s for s in statuses if s.status == "failed"]
    for s in failed:
        console.print(f"[red]run {s.run_id} failed:[/red] {s.error}")
    if failed:
        fail(f"{len(failed)} of {len(statuses)} run(s) failed", "engram retry <run> resumes a run at its failed stage")


@app.command()
def status(
    run_id: str = typer.Argument(None, help="a run id, or any unique start of one (as this command shows them)"),
    dataset: str = typer.Option(None, "--dataset", "-d"),
    user: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Per-stage progress of a run, or of a dataset's runs."""
    if (run_id is None) == (dataset is None):
        fail("give a run id or --dataset, not " + ("both" if run_id else "neither"),
              "engram status -d DATASET lists a dataset's runs; engram status RUN shows one")
    prepare_services()

    client = EngramClient(local_reads=True)
    queues = None
    try:
        if run_id:
            runs = [client.run_status(client.find_run(run_id, user), user)]
        else:
            overview = client.dataset_overview(dataset, user)
            runs, queues = overview.runs, overview.queues
    except EngramError as exc:
        task_failed(exc)
    if as_json:
        out = [r.model_dump(mode="json") for r in runs]
        console.print_json(json.dumps(out if queues is None else {"runs": out, "queues": queues}))
        return
    table = Table("run", "status", "stages", "llm calls", "error")
    for r in runs:
        stages = " ".join(f"{s.stage}:{s.status}" for s in r.stages)
        table.add_row(str(r.run_id)[:8], r.status, stages, str(r.llm_calls), r.error or "")
    console.print(table)
    if queues is not None:
        console.print("queued (messages waiting): " + "  ".join(f"{name} {n}" for name, n in queues.items()))


@app.command()
def recall(
    question: str = typer.Argument(...),
    dataset: list[str] = typer.Option([], "--dataset", "-d", help="repeatable; none = every dataset you can read"),
    user: str = typer.Option("default"),
    search_type: str = typer.Option(None, "--type", "-t", help="a search type; none = the rule router picks"),
    top_k: int = typer.Option(5, "--top-k", "-k"),
    session: str = typer.Option(None, "--session", "-s", help="session id: its entries are searched too"),
    as_of: str = typer.Option(None, "--as-of", help="facts valid at this time (ISO date/time, or a year)"),
    history: bool = typer.Option(False, "--history", help="include superseded facts, flagged"),
    skill: list[str] = typer.Option(None, "--skill", help="AGENTIC_COMPLETION: repeatable; offer only these skills"),
    tool: list[str] = typer.Option(None, "--tool", help="AGENTIC_COMPLETION: repeatable; offer only these tools"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Ask memory a question; prints ranked results with provenance."""
    prepare_services()

    extra = {"session_id": session, "include_history": history or None, "skills": skill or None, "tools": tool or None,
             "as_of": f"{as_of}-01-01T00:00:00Z" if as_of and as_of.isdigit() else as_of}
    try:
        result = EngramClient().recall(question, datasets=dataset, user=user, search_type=search_type, top_k=top_k,
                                       **{k: v for k, v in extra.items() if v is not None})
    except EngramError as exc:
        task_failed(exc)
    if as_json:
        console.print_json(result.model_dump_json())
        return

    render_recall(console, result)


@app.command("eval")
def eval_(
    qa_file: Path = typer.Argument(None, exists=True, dir_okay=False,
                                   help="JSON lines of {question, answer} (default: the shipped demo QA set)"),
    dataset: list[str] = typer.Option(..., "--dataset", "-d"),
    user: str = typer.Option("default"),
    search_type: str = typer.Option(None, "--type", "-t"),
    top_k: int = typer.Option(5, "--top-k", "-k", help="k of answer-in-context@k, and the recall depth"),
    out: Path = typer.Option(None, "--out", "-o", help="JSON report (default: eval-<dataset>.json)"),
) -> None:
    """Recall every question of a QA file; print EM, F1 and answer-in-context@k; write a report."""
    prepare_services()

    qa_file = qa_file or DEMO_QA
    try:
        qa = load_qa(qa_file.read_text().splitlines())
    except BadQAFile as exc:
        fail(f"{qa_file}: {exc}", 'one JSON object a line: {"question": "...", "answer": "..."}')
    client = EngramClient(local_reads=True)
    try:
        readable = {d.name for d in client.datasets(user).datasets if "read" in d.permissions}
    except EngramError as exc:
        task_failed(exc)
    for name in dataset:
        if name not in readable:  # one clear line, not one error per question
            fail(f"dataset {name!r} does not exist for user {user!r} (or is not readable by them)",
                  "engram datasets lists the datasets you can read (--user: whose)")
    report = evaluate(qa, lambda q: client.recall(q, datasets=dataset, user=user, search_type=search_type,
                                                   top_k=top_k), top_k)
    report.update(qa_file=str(qa_file), datasets=dataset, search_type=search_type)
    out = out or Path(f"eval-{'-'.join(dataset)}.json")
    out.write_text(json.dumps(report, indent=2, default=str))
    render_eval(console, report, out)
    if report["metrics"]["errors"]:
        fail(f"{report['metrics']['errors']} of {report['metrics']['count']} questions failed (see the table)",
              f"the report {out} holds each error")


@app.command()
def demo(corpus: Path = typer.Option(None, help="directory of documents (default: the shipped demo corpus)")) -> None:
    """Start services and a worker, remember a corpus, answer questions, shut down."""
    raise typer.Exit(run_demo(console, corpus))
