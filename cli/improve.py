"""`engram` commands: improve, sessions, feedback, share and unshare: sessions, improve runs and grants."""

from __future__ import annotations

import json

import typer

from engram.cli.app import fail, app, console, prepare_services, task_failed
from engram.cli.sessions import render_learning, render_run, render_sessions, wait_for_run
from engram.tasks.client import EngramClient, EngramError


@app.command()
def improve(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    session: list[str] = typer.Option([], "--session", "-s", help="session id (repeatable)"),
    user: str = typer.Option("default"),
    wait: bool = typer.Option(False, "--wait", help="block until the run finishes; show its stages"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Improve a dataset now (explicit: never declined by admission). Without --session only the
    dataset-wide stages run."""
    prepare_services()

    client = EngramClient(local_reads=True)
    try:
        result = client.improve(dataset, session_ids=session, user=user)
        run = wait_for_run(client, str(result.run_id), user=user) if wait and result.status == "started" else None
    except EngramError as exc:
        task_failed(exc)
    if as_json:
        console.print_json(json.dumps({"result": result.model_dump(mode="json"), "run": run}))
        return
    console.print(f"improve: [bold]{result.status}[/bold]"
                  + (f" (run {result.run_id}, fence {result.fence})" if result.run_id else "")
                  + (f" — {result.reason}; rerun requested" if result.rerun_requested else ""))
    if run is not None:
        render_run(console, run)
        if run["status"] in ("aborted", "lost", "completed_with_errors", "failed"):
            fail(f"improve run {run['run_id']} {run['status']}" + (f": {run['error']}" if run.get("error") else ""),
                  "the stages above name what failed; engram sessions -d " + dataset + " shows the claim and runs")


@app.command()
def sessions(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    session: str = typer.Option(None, "--session", "-s"),
    user: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Sessions of a dataset: entries, pending work, last improve, claim holders, last run."""
    prepare_services()

    try:
        view = EngramClient().sessions(dataset, session_id=session, user=user)
    except EngramError as exc:
        task_failed(exc)
    if as_json:
        console.print_json(json.dumps(view))
        return
    render_sessions(console, view)
    render_learning(console, view)


@app.command()
def feedback(
    entry_id: str = typer.Argument(..., help="session entry id (from remember's session_stored answer)"),
    verdict: str = typer.Argument(..., help="helpful or harmful"),
    score: float = typer.Option(None, help="0..1, stored as the entry's confidence"),
    user: str = typer.Option("default"),
) -> None:
    """Record feedback on a session entry; the next improve folds it into feedback weights."""
    prepare_services()

    try:
        result = EngramClient().feedback(entry_id, verdict, score=score, user=user)
    except EngramError as exc:
        task_failed(exc)
    console.print(f"feedback recorded: helpful {result['helpful_count']}, harmful {result['harmful_count']}, "
                  f"confidence {result['confidence']:.2f}")

@app.command()
def share(
    dataset: str = typer.Argument(..., help="your dataset"),
    grantee: str = typer.Argument(..., help="the user to grant"),
    permission: list[str] = typer.Option(["read"], "--permission", "-p", help="read, write, delete or share (repeatable)"),
    user: str = typer.Option("default"),
) -> None:
    """Share a dataset: grant another user read (default), write, delete or share."""
    _grants("share", dataset, grantee, permission, user)


@app.command()
def unshare(
    dataset: str = typer.Argument(..., help="your dataset"),
    grantee: str = typer.Argument(..., help="the user to revoke"),
    permission: list[str] = typer.Option([], "--permission", "-p", help="what to revoke (repeatable; default all)"),
    user: str = typer.Option("default"),
) -> None:
    """Revoke another user's grants on a dataset (all of them unless --permission names some)."""
    _grants("unshare", dataset, grantee, permission, user)


def _grants(action: str, dataset: str, grantee: str, permissions: list[str], user: str) -> None:
    prepare_services()

    try:
        result = getattr(EngramClient(), action)(dataset, grantee, permissions or None, user=user)
    except EngramError as exc:
        task_failed(exc)
    console.print(f"{grantee} on {dataset}: {', '.join(result['permissions']) or 'no grants'}")
