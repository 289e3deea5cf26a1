"""The `engram` Typer app, its sub-apps and what every command module shares: the console,
the error exit (one line with its fix; `engram --debug` shows the traceback) and the service
set-up (resolve or start the embedded services)."""

from __future__ import annotations

import os
import warnings

import typer
from rich.console import Console
from rich.markup import escape
from engram.adapters.services import ServiceError, resolve
from engram.adapters.store import migrate as migrations
from engram.cli import doctor
from engram.cli.errors import CommandError, task_fix
from engram.settings import get_settings

warnings.filterwarnings("ignore", module="platformdirs")

app = typer.Typer(help="Engram: memory-processing backend for AI agents.", no_args_is_help=True,
                  pretty_exceptions_show_locals=False)
db_app = typer.Typer(help="Database schema (Alembic migrations).", no_args_is_help=True)
services_app = typer.Typer(help="The embedded Postgres and Redis of the default set-up.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(services_app, name="services")

from engram.cli.skills import skills_app  # noqa: E402  (typer/rich only)

app.add_typer(skills_app, name="skills")
console = Console()


class Options:
    debug = False  # `engram --debug ...`: an error shows its traceback instead of one line


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="on an error, show the traceback")) -> None:
    Options.debug = debug


def print_error(message: str, fix: str = "") -> None:
    line = f"[red]error:[/red] {escape(' '.join(message.split()))}"
    if fix:
        line += f" [yellow]— fix: {escape(' '.join(fix.split()))}[/yellow]"
    console.print(line, soft_wrap=True)  # one line however long: no wrapping at the terminal width


def fail(message: str, fix: str) -> None:
    """Stop the command with one line: what went wrong and how to fix it; exit code 1."""
    if Options.debug:
        raise CommandError(message, fix)
    print_error(message, fix)
    raise typer.Exit(1)


def task_failed(exc: Exception) -> None:
    """Stop the command on a public task's refusal, with the fix for it."""
    fail(str(exc), task_fix(exc, str(exc)))


def prepare_services(migrate: bool = True):
    """Resolve (or start) the services and export their URLs for child processes."""
    settings = get_settings()
    try:
        urls = resolve(settings)
    except ServiceError as exc:
        fail(str(exc), "engram doctor")
    if migrate and urls.embedded_postgres:
        migrations.upgrade(urls.database_url)  # the embedded default migrates itself on start
    os.environ["ENGRAM_DATABASE_URL"] = urls.database_url
    os.environ["ENGRAM_REDIS_URL"] = urls.redis_url
    return urls


def preflight(*, skip: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> None:
    """Doctor's checks before a command that needs them (db upgrade, worker): the first failing
    one stops the command with doctor's fix, instead of a traceback further on."""
    for check in doctor.run_checks(skip=skip, only=only):
        if not check.ok:
            fail(f"{check.name}: {check.detail}", check.fix)
