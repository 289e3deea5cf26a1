"""`engram` commands: doctor, health, worker, beat, flower, db and services: running and checking the fleet."""

from __future__ import annotations

import json
import shlex
import sys
import urllib.request

import typer
from rich.table import Table

from engram.cli.app import fail, app, console, db_app, preflight, prepare_services, print_error, services_app
from engram.adapters.redis_client import get_redis
from engram.adapters.services import is_embedded_redis, stop_embedded_postgres, stop_embedded_redis
from engram.adapters.store import migrate as migrations
from engram.adapters.store.engine import check_dimension, get_engine
from engram.cli.doctor import run_checks
from engram.cli.flower import protect_metrics
from engram.cli.worker import WorkerSpec, plan, run_one, serve_metrics, supervise
from engram.settings import get_settings
import socket
import os


@app.command()
def doctor() -> None:
    """Check Postgres, pgvector, Redis, migrations, embedder and LLM config."""
    ok = True
    table = Table("component", "status", "detail")
    for check in run_checks():
        ok &= check.ok
        status = "[green]ok[/green]" if check.ok else "[red]FAIL[/red]"
        detail = check.detail if check.ok else f"{check.detail}\n[yellow]fix:[/yellow] {check.fix}"
        table.add_row(check.name, status, detail)
    console.print(table)
    raise typer.Exit(0 if ok else 1)


@app.command()
def health(
    role: str = typer.Argument(..., help="worker (a worker on this host answers a ping), beat (Redis and the "
                                         "beat lock answer) or flower (its /healthcheck answers)"),
    port: int = typer.Option(5555, help="flower's port"),
) -> None:
    """Container healthcheck: exit 0 when this host's service answers, else 1 with the reason."""
    if role == "flower":
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthcheck", timeout=5).read()
        except OSError as exc:
            fail(f"flower does not answer on port {port}: {exc}", f"start it: engram flower --port {port}")
        console.print("flower: ok")
        return
    prepare_services(migrate=False)
    if role == "worker":
        from engram.celery_app import app as celery_app

        host = socket.gethostname()
        replies = celery_app.control.ping(timeout=5) or []
        if not any(node.endswith(f"@{host}") for reply in replies for node in reply):
            fail(f"no worker on {host} answered a ping (answered: {[n for r in replies for n in r]})",
                  "start one on this host: engram worker")
    elif role == "beat":
        from engram.adapters.beat import LOCK_KEY

        if not get_redis().exists(LOCK_KEY):  # a standby beat is healthy while another holds the lock
            fail("no beat holds the scheduling lock", "start one: engram beat")
    else:
        fail(f"unknown role {role!r}", "engram health worker, engram health beat or engram health flower")
    console.print(f"{role}: ok")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def worker(
    ctx: typer.Context,
    concurrency: int = typer.Option(2, help="pipeline worker processes"),
    queues: str = typer.Option("", help="comma-separated queues (default: all; `api` = the api queue)"),
    api_threads: int = typer.Option(None, help="threads serving the api queue (default ENGRAM_API_THREADS, 8)"),
    hostname: str = typer.Option(None, "--hostname", "-n", help="node name (default: engram-<random>@%h)"),
    pool: str = typer.Option(None, "--pool", "-P", help="pool of the pipeline worker (default prefork)"),
    nice: int = typer.Option(None, hidden=True, help="set by the supervisor for its children"),
    metrics_port: int = typer.Option(None, "--metrics-port", min=1, max=65535,
                                     help="serve Prometheus /metrics of every process of this worker on this "
                                          "port (default ENGRAM_METRICS_PORT; unset = not served)"),
    loglevel: str = typer.Option("info"),
) -> None:
    """Start workers: the pipeline queues on processes, the api queue on threads (extra arguments go
    to celery). Doctor's checks run first (all but the embedder's, which the workers load)."""
    prepare_services()
    preflight(skip=("embedder",))

    settings = get_settings()
    check_dimension(get_engine(), settings.embedding_dimension)
    _check_fleet(settings)
    port = metrics_port or settings.metrics_port
    if port:  # before any process of the tree records a value (they all write to its directory)
        try:
            serve_metrics(settings, port)
        except OSError as exc:
            fail(f"cannot serve metrics on {settings.metrics_address}:{port}: {exc}")
    specs = plan(settings, queues=queues, concurrency=concurrency, pool=pool, api_threads=api_threads,
                 hostname=hostname)
    if len(specs) > 1:
        raise typer.Exit(supervise(specs, loglevel, list(ctx.args)))
    spec = specs[0] if nice is None else WorkerSpec(**{**specs[0].__dict__, "nice": nice})
    run_one(spec, loglevel, list(ctx.args))


def _check_fleet(settings) -> None:
    """Refuse to join a fleet whose running workers use another signing key, database or lock
    Redis: this machine would split it (adapters/fleet). Asked from a child process: the broker
    connection, pidbox consumer and clients the question needs must not be inherited by the
    workers this process forks (a pool process replacing a killed one then never came up)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            from engram.adapters.fleet import ASPECTS, disagreements, identity
            from engram.celery_app import app as celery_app

            differ = disagreements(celery_app, identity(settings), settings.queues)
            if differ:
                aspect, nodes = next(iter(differ.items()))
                what, fix = ASPECTS[aspect]
                print_error(f"running workers {what} than this one: {', '.join(nodes)}; this worker would split "
                            "the fleet", f"{fix} on every machine (the same value everywhere)")
                code = 1
        except Exception as exc:  # noqa: BLE001 - a check that cannot ask does not stop the worker
            print(f"warning: could not compare with the running workers: {exc}", flush=True)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise typer.Exit(1)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def beat(ctx: typer.Context, loglevel: str = typer.Option("info")) -> None:
    """Start celery beat (the periodic maintenance schedule)."""
    prepare_services()
    from engram.celery_app import app as celery_app

    schedule = get_settings().state_dir / "celerybeat-schedule"
    celery_app.start(["beat", f"--loglevel={loglevel}", f"--schedule={schedule}", *ctx.args])


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def flower(ctx: typer.Context, port: int = typer.Option(5555)) -> None:
    """Start Flower. Set FLOWER_BASIC_AUTH=user:password (or FLOWER_UNAUTHENTICATED_API=true); its
    /metrics asks the same credentials as its UI."""
    prepare_services(migrate=False)
    from engram.celery_app import app as celery_app

    protect_metrics()

    celery_app.start(["flower", f"--port={port}", *ctx.args])


@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply migrations up to REVISION (default head), after doctor's PostgreSQL and pgvector checks."""
    urls = prepare_services(migrate=False)
    preflight(only=("postgres", "pgvector"))

    migrations.upgrade(urls.database_url, revision)
    console.print(f"database at revision {migrations.current_revision(urls.database_url)}")


@db_app.command("downgrade")
def db_downgrade(revision: str = typer.Argument(..., help="target revision, e.g. base")) -> None:
    """Revert migrations down to REVISION."""
    urls = prepare_services(migrate=False)
    preflight(only=("postgres",))

    migrations.downgrade(urls.database_url, revision)
    console.print(f"database at revision {migrations.current_revision(urls.database_url)}")


@services_app.command("start")
def services_start() -> None:
    """Start the embedded servers (only those without a configured URL)."""
    urls = prepare_services()
    console.print_json(json.dumps({"database_url": urls.database_url, "redis_url": urls.redis_url}))


@services_app.command("env")
def services_env() -> None:
    """Print `export` lines a producer's shell needs (eval "$(engram services env)"): the Redis the
    workers use (the embedded one is started if needed; its port is chosen once per state directory)
    and the broker when one is configured."""
    urls = prepare_services()
    lines = {"ENGRAM_REDIS_URL": urls.redis_url}
    broker = get_settings().broker_url
    if broker:
        lines["ENGRAM_BROKER_URL"] = broker
    for name, value in lines.items():
        typer.echo(f"export {name}={shlex.quote(value)}")


@services_app.command("stop")
def services_stop() -> None:
    """Stop the embedded servers started from the state directory (a configured URL's server is
    not Engram's to stop: it is left alone and said so)."""
    s = get_settings()
    redis_url = None if s.redis_url and is_embedded_redis(s, s.redis_url) else s.redis_url
    for name, variable, configured, stop in (("postgres", "ENGRAM_DATABASE_URL", s.database_url, stop_embedded_postgres),
                                             ("redis", "ENGRAM_REDIS_URL", redis_url, stop_embedded_redis)):
        if configured:
            console.print(f"{name}: external ({variable} is set), left running")
        else:
            console.print(f"{name}: " + ("stopped" if stop(s) else f"not running (embedded, in {s.state_dir})"))
