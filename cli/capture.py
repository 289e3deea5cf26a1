"""`engram` commands: capture, reprocess and mcp: the capture lane and the MCP server."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from engram.cli.app import fail, app, console, prepare_services, task_failed
from engram.cli.mcp_server import Authority, EngramTools, build_server, token_auth
from engram.tasks.client import EngramClient, EngramError


@app.command()
def capture(
    title: str = typer.Argument(...),
    dataset: str = typer.Option(..., "--dataset", "-d"),
    content: str = typer.Option("", "--content", "-c"),
    obj_type: str = typer.Option(None, "--type", "-t", help="decision, lesson, fix, session, research, source, "
                                                             "synthesis, idea; none = classified"),
    template: str = typer.Option(None, "--template", help="session, fix, decision, lesson, research, idea"),
    field: list[str] = typer.Option([], "--field", "-f", help="template field, name=value (repeatable)"),
    project: str = typer.Option("", "--project", "-p"),
    tag: list[str] = typer.Option([], "--tag", help="repeatable"),
    summary: str = typer.Option(None, "--summary", help="given: classification is skipped (confidence 0.9)"),
    entities: str = typer.Option(None, "--entities", help='JSON: [{"name": "Redis", "type": "technology"}]'),
    properties: str = typer.Option(None, "--properties", help='JSON: {"key": "value"}'),
    user: str = typer.Option("default"),
) -> None:
    """Capture a typed knowledge object and wait for its pipeline (complete or partial)."""
    prepare_services()

    fields = {}
    for item in field:
        name, sep, value = item.partition("=")
        if not sep:
            fail(f"--field takes name=value, got {item!r}", "--field decision='use Redis streams'")
        fields[name.strip()] = value
    extra = {"content": content, "type": obj_type, "template": template, "template_fields": fields or None,
             "project": project, "tags": tag, "summary": summary, "entities": entities, "properties": properties}
    try:
        done = EngramClient().capture(title, dataset=dataset, user=user, wait=True,
                                      **{k: v for k, v in extra.items() if v is not None})
    except (EngramError, TimeoutError) as exc:
        task_failed(exc)
    _print_capture("captured", done, dataset)


@app.command()
def reprocess(
    object_id: str = typer.Argument(..., help="the captured object's id"),
    dataset: str = typer.Option(..., "--dataset", "-d"),
    user: str = typer.Option("default"),
) -> None:
    """Rerun a capture from its first failed stage (a partial capture) and wait: complete or partial."""
    prepare_services()

    try:
        done = EngramClient().reprocess(object_id, dataset=dataset, user=user, wait=True)
    except (EngramError, TimeoutError) as exc:
        task_failed(exc)
    _print_capture("reprocessed", done, dataset)


def _print_capture(verb: str, done, dataset: str) -> None:
    console.print(f"{verb} {done.object_id}: {done.status} " + " ".join(f"{s.stage}:{s.status}" for s in done.stages))
    for s in done.stages:
        if s.error:
            console.print(f"[red]{s.stage} failed:[/red] {s.error}")
    if done.status == "partial":
        console.print(f"the object is stored; `engram reprocess {done.object_id} -d {dataset}` reruns "
                      "the failed stage")


@app.command()
def mcp(
    user: str = typer.Option(None, help="the user every tool acts as (default: ENGRAM_MCP_USER or 'default')"),
    http: bool = typer.Option(False, "--http", help="streamable HTTP on localhost instead of stdio"),
    port: int = typer.Option(8765, help="HTTP port (bound to 127.0.0.1)"),
    tokens: Path = typer.Option(None, help="HTTP: JSON file of bearer token → user name"),
    timeout: float = typer.Option(120.0, help="seconds a tool waits for its task"),
) -> None:
    """Serve Engram's tools to MCP clients (stdio by default)."""
    prepare_services()

    if tokens is not None and not http:
        fail("--tokens applies to --http; a stdio server acts as --user", "add --http, or drop --tokens for --user NAME")
    try:
        authority = Authority.from_file(tokens) if tokens else Authority(user or os.environ.get("ENGRAM_MCP_USER")
                                                                          or "default")
    except ValueError as exc:
        fail(str(exc), 'a JSON file of {"<token>": "<user name>"}')
    tools = EngramTools(authority, EngramClient(timeout=timeout), timeout)
    host = "127.0.0.1"
    auth, verifier = token_auth(authority.tokens, host, port) if tokens else (None, None)
    server = build_server(tools, auth=auth, token_verifier=verifier)
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run()
