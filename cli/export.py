"""`engram export` and `engram import`: one dataset's memory to a file and back (pipelines/export.py)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from engram.cli.app import fail, app, console, prepare_services
from engram.adapters.store import Store
from engram.adapters.store.access import AccessDenied, UnknownDataset
from engram.pipelines import export
from engram.pipelines.errors import BadInput
from engram.settings import get_settings


@app.command("export")
def export_dataset(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    output: Path = typer.Option(..., "--output", "-o", help="the file to write"),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl (for engram import) or graphml (for graph tools)"),
    user: str = typer.Option("default"),
) -> None:
    """Write a dataset's memory (documents, chunks, graph, sessions, lessons, skills, grants) to a file."""
    if fmt not in export.FORMATS:
        fail(f"unknown format {fmt!r}", "--format jsonl or --format graphml")
    prepare_services()
    from engram.tasks.export import now

    s = get_settings()
    partial = output.with_name(output.name + ".partial")
    records = -1
    try:
        with partial.open("w", encoding="utf-8") as out:
            for line in export.export_file(Store(), dataset, user, fmt=fmt, model=s.embedding_model,
                                           dimension=s.embedding_dimension, now=now()):
                out.write(line + "\n")
                records += 1
        os.replace(partial, output)
    except (BadInput, UnknownDataset, AccessDenied, OSError) as exc:
        partial.unlink(missing_ok=True)
        denied = isinstance(exc, (UnknownDataset, AccessDenied))
        fail(str(exc), "engram datasets lists the datasets you may read" if denied else "check the output path")
    what = f"{records} records" if fmt == "jsonl" else "the graph"
    console.print(f"exported dataset [bold]{dataset}[/bold] ({what}) to {output}")


@app.command("import")
def import_dataset(
    file: Path = typer.Argument(..., help="a jsonl file written by engram export"),
    dataset: str = typer.Option(None, "--dataset", "-d", help="the new dataset's name (default: the exported name)"),
    user: str = typer.Option("default", help="who owns the imported dataset"),
) -> None:
    """Restore an export as a new dataset (same ids; vectors reused when the embedding model matches)."""
    if not file.is_file():
        fail(f"{file}: no such file", "give the path of a file written by engram export")
    prepare_services()
    from engram.tasks.export import embedder_port

    s = get_settings()
    try:
        with file.open(encoding="utf-8") as lines:
            result = export.import_records(Store(), export.decoded_lines(lines), user=user, name=dataset,
                                           model=s.embedding_model, dimension=s.embedding_dimension,
                                           embed=embedder_port)
    except (BadInput, OSError, UnicodeDecodeError) as exc:
        fail(f"{file}: {exc}", "import a jsonl file written by engram export of this or an older version, unchanged")
    total = sum(n for t, n in result.counts.items())
    console.print(f"imported {total} records into dataset [bold]{result.dataset}[/bold] "
                  f"(vectors {result.vectors}{f', {result.reembedded} made again' if result.reembedded else ''})")
