"""`engram explorer`: serve the memory explorer on localhost (uvicorn)."""

from __future__ import annotations

from pathlib import Path

import typer

from engram.cli.app import fail, app, console, prepare_services
from engram.cli.explorer import create_app
from engram.cli.mcp_server import Authority
from engram.tasks.client import EngramClient


@app.command()
def explorer(
    tokens: Path = typer.Option(..., help="JSON file of token → user name (the `engram mcp --http` token map)"),
    port: int = typer.Option(8766, help="HTTP port (bound to 127.0.0.1)"),
    timeout: float = typer.Option(60.0, help="seconds a page waits for a task"),
) -> None:
    """Browse memory in a browser: datasets, runs, documents, entity graphs, a recall playground."""
    try:
        authority = Authority.from_file(tokens)
    except ValueError as exc:
        fail(str(exc), 'a JSON file of {"<token>": "<user name>"}')
    if not authority.tokens:
        fail(f"token map {tokens} is empty", 'add a {"<token>": "<user name>"} entry')
    prepare_services()
    import uvicorn


    host = "127.0.0.1"
    console.print(f"Engram explorer on http://{host}:{port} (log in with a token of {tokens}); "
                  "pages read through the public tasks: a worker must be running")
    uvicorn.run(create_app(EngramClient(timeout=timeout), authority.tokens), host=host, port=port,
                log_level="warning")
