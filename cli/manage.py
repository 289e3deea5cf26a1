"""`engram` commands: datasets, forget and retry: what memory holds, taking it out, and
resuming a failed run. Each goes through the public tasks (engram.datasets, engram.forget,
engram.cognify), which check the caller's grants; ids may be given shortened, as shown."""

from __future__ import annotations

import json
import sys

import typer
from rich.markup import escape
from rich.table import Table

from engram.cli.app import fail, app, console, prepare_services, task_failed
from engram.tasks.client import EngramClient, EngramError, RunHandle


def _client():
    prepare_services()

    return EngramClient(local_reads=True)


@app.command()
def datasets(
    user: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The datasets you hold a grant on: owner, your grants, who else has which (with the share
    grant), what each holds and its runs."""
    client = _client()
    try:
        result = client.datasets(user)
    except EngramError as exc:
        task_failed(exc)
    if as_json:
        console.print_json(result.model_dump_json())
        return
    if not result.datasets:
        console.print(f"user {user!r} holds no dataset yet (engram remember FILE -d NAME creates one)")
        return
    table = Table("dataset", "owner", "your grants", "shared with", "items", "chunks", "entities", "edges", "runs")
    for d in result.datasets:
        others = "(needs the share grant)" if d.grants is None else "; ".join(
            f"{who}: {','.join(perms)}" for who, perms in d.grants.items() if who != d.owner) or "nobody"
        runs = ", ".join(f"{n} {status}" for status, n in sorted(d.runs.items())) or "none"
        table.add_row(escape(d.name), escape(d.owner), ",".join(d.permissions), escape(others),
                      str(d.counts["data_items"]), str(d.counts["chunks"]), str(d.counts["entities"]),
                      str(d.counts["edges"]), runs)
    console.print(table)


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        fail(f"{question} needs a confirmation, and there is no terminal to ask on", "add --yes")
    if not typer.confirm(question + "?", default=False):
        fail("nothing forgotten", "answer y, or add --yes")


@app.command()
def forget(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    item: str = typer.Option(None, "--item", help="a data item id, or a unique start of one"),
    document: str = typer.Option(None, "--document", help="every item of this document name (e.g. notes.md)"),
    everything: bool = typer.Option(False, "--all", help="everything the dataset holds"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for a confirmation"),
    user: str = typer.Option("default"),
) -> None:
    """Forget one item, every item of a document name, or a whole dataset (delete grant): its
    chunks, summaries, and the entities and edges only it supported. Asks first, unless --yes."""
    if sum(x is not None and x is not False for x in (item, document, everything)) != 1:
        fail("say what to forget: exactly one of --item, --document or --all",
              f"engram forget -d {dataset} --document notes.md (or --item ID, or --all)")

    client = _client()
    try:
        if everything:
            _confirm(f"forget everything dataset {dataset!r} holds", yes)
            results = [client.forget(dataset, user)]
        else:
            found = client.find_items(dataset, user, item=item, document=document)
            what = f"item {item!r}" if item is not None else f"document {document!r}"
            if not found:
                fail(f"no {what} in dataset {dataset!r}",
                      f"engram status -d {dataset} --json shows each run's data_item_id and name")
            if item is not None and len(found) > 1:
                fail(f"item id {item!r} is the start of more than one item", "give more of the id")
            names = ", ".join(f"{str(f['id'])[:8]} {f['name'] or ''}".strip() for f in found[:5])
            _confirm(f"forget {len(found)} item(s) of dataset {dataset!r} ({names}"
                     + (", ..." if len(found) > 5 else "") + ")", yes)
            results = [client.forget(dataset, user, data_item_id=f["id"]) for f in found]
    except EngramError as exc:
        task_failed(exc)
    total = {k: sum(getattr(r, k) for r in results) for k in type(results[0]).model_fields}
    console.print("forgotten: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in total.items()))


@app.command()
def retry(
    run: str = typer.Argument(..., help="a run id, or any unique start of one (as engram status shows them)"),
    user: str = typer.Option("default"),
    wait: bool = typer.Option(False, "--wait", help="block until the run finishes; show its stages"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Resume a failed run at its first unfinished stage (write grant); completed stages stay done."""
    client = _client()
    try:
        run_id = client.find_run(run, user)
        result = client.retry(run_id, user)
        final = RunHandle(client, run_id, user=user).wait() if wait and result["status"] == "pending" else None
    except EngramError as exc:
        task_failed(exc)
    if as_json:
        console.print_json(json.dumps({"retry": result, "run": final.model_dump(mode="json") if final else None}))
        return
    if result["status"] == "completed":
        console.print(f"run {run_id}: already completed, nothing to retry")
        return
    console.print(f"run {run_id}: resumed at {', '.join(result['stages'])}")
    if final is not None:
        console.print(f"run {run_id}: {final.status} " + " ".join(f"{s.stage}:{s.status}" for s in final.stages))
        if final.status != "completed":
            fail(f"run {run_id} {final.status} again: {final.error}", "engram status " + str(run_id)[:8])
