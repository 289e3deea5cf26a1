"""The `engram` Typer app, its sub-apps and what every command module shares: the console,
the error exit and the service set-up (resolve or start the embedded services)."""

from __future__ import annotations

import os
import warnings

import typer
from rich.console import Console

warnings.filterwarnings("ignore", module="platformdirs")

app = typer.Typer(help="Engram: memory-processing backend for AI agents.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema (Alembic migrations).", no_args_is_help=True)
services_app = typer.Typer(help="The embedded Postgres and Redis of the default set-up.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(services_app, name="services")

from engram.cli.skills import skills_app  # noqa: E402  (typer/rich only)

app.add_typer(skills_app, name="skills")
console = Console()


def _fail(message: str) -> None:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def prepare_services(migrate: bool = True):
    """Resolve (or start) the services and export their URLs for child processes."""
    from engram.adapters.services import ServiceError, resolve
    from engram.adapters.store import migrate as migrations
    from engram.settings import get_settings

    settings = get_settings()
    try:
        urls = resolve(settings)
    except ServiceError as exc:
        _fail(str(exc))
    if migrate and urls.embedded_postgres:
        migrations.upgrade(urls.database_url)  # the embedded default migrates itself on start
    os.environ["ENGRAM_DATABASE_URL"] = urls.database_url
    os.environ["ENGRAM_REDIS_URL"] = urls.redis_url
    return urls
