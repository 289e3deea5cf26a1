"""The `engram` command: thin — parse, call the client or an adapter, render with rich."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

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


# ------------------------------------------------------------------ operations


@app.command()
def doctor() -> None:
    """Check Postgres, pgvector, Redis, migrations, embedder and LLM config."""
    from engram.cli.doctor import run_checks

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
    import socket

    if role == "flower":
        import urllib.request

        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthcheck", timeout=5).read()
        except OSError as exc:
            _fail(f"flower does not answer on port {port}: {exc}")
        return
    prepare_services(migrate=False)
    if role == "worker":
        from engram.celery_app import app as celery_app

        host = socket.gethostname()
        replies = celery_app.control.ping(timeout=5) or []
        if not any(node.endswith(f"@{host}") for reply in replies for node in reply):
            _fail(f"no worker on {host} answered a ping (answered: {[n for r in replies for n in r]})")
    elif role == "beat":
        from engram.adapters.beat import LOCK_KEY
        from engram.adapters.redis_client import get_redis

        if not get_redis().exists(LOCK_KEY):  # a standby beat is healthy while another holds the lock
            _fail("no beat holds the scheduling lock")
    else:
        _fail(f"unknown role {role!r}: worker, beat or flower")
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
    loglevel: str = typer.Option("info"),
) -> None:
    """Start workers: the pipeline queues on processes, the api queue on threads (extra arguments go
    to celery)."""
    prepare_services()
    from engram.adapters.store.engine import check_dimension, get_engine
    from engram.cli.worker import WorkerSpec, plan, run_one, supervise
    from engram.settings import get_settings

    settings = get_settings()
    check_dimension(get_engine(), settings.embedding_dimension)
    specs = plan(settings, queues=queues, concurrency=concurrency, pool=pool, api_threads=api_threads,
                 hostname=hostname)
    if len(specs) > 1:
        raise typer.Exit(supervise(specs, loglevel, list(ctx.args)))
    spec = specs[0] if nice is None else WorkerSpec(**{**specs[0].__dict__, "nice": nice})
    run_one(spec, loglevel, list(ctx.args))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def beat(ctx: typer.Context, loglevel: str = typer.Option("info")) -> None:
    """Start celery beat (the periodic maintenance schedule)."""
    prepare_services()
    from engram.celery_app import app as celery_app
    from engram.settings import get_settings

    schedule = get_settings().state_dir / "celerybeat-schedule"
    celery_app.start(["beat", f"--loglevel={loglevel}", f"--schedule={schedule}", *ctx.args])


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def flower(ctx: typer.Context, port: int = typer.Option(5555)) -> None:
    """Start Flower. Set FLOWER_BASIC_AUTH=user:password (or FLOWER_UNAUTHENTICATED_API=true)."""
    prepare_services(migrate=False)
    from engram.celery_app import app as celery_app

    celery_app.start(["flower", f"--port={port}", *ctx.args])


@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply migrations up to REVISION (default head)."""
    urls = prepare_services(migrate=False)
    from engram.adapters.store import migrate as migrations

    migrations.upgrade(urls.database_url, revision)
    console.print(f"database at revision {migrations.current_revision(urls.database_url)}")


@db_app.command("downgrade")
def db_downgrade(revision: str = typer.Argument(..., help="target revision, e.g. base")) -> None:
    """Revert migrations down to REVISION."""
    urls = prepare_services(migrate=False)
    from engram.adapters.store import migrate as migrations

    migrations.downgrade(urls.database_url, revision)
    console.print(f"database at revision {migrations.current_revision(urls.database_url)}")


@services_app.command("start")
def services_start() -> None:
    """Start the embedded servers (only those without a configured URL)."""
    urls = prepare_services()
    console.print_json(json.dumps({"database_url": urls.database_url, "redis_url": urls.redis_url}))


@services_app.command("stop")
def services_stop() -> None:
    """Stop the embedded servers started from the state directory."""
    from engram.adapters.services import stop_embedded_postgres, stop_embedded_redis
    from engram.settings import get_settings

    s = get_settings()
    console.print(f"postgres stopped: {stop_embedded_postgres(s)}; redis stopped: {stop_embedded_redis(s)}")


# ------------------------------------------------------------------ memory


@app.command()
def remember(
    target: str = typer.Argument(..., help="a file, a directory, or literal text"),
    dataset: str = typer.Option(..., "--dataset", "-d"),
    user: str = typer.Option("default"),
    wait: bool = typer.Option(False, "--wait", help="block until every run finishes"),
) -> None:
    """Remember a file, directory or text; with --wait, show per-stage progress."""
    prepare_services()
    from engram.tasks.client import EngramClient, EngramError

    client = EngramClient(local_reads=True)
    path = Path(target)
    try:
        handle = client.remember(None if path.exists() else target, dataset=dataset, user=user,
                                 paths=[path] if path.exists() else [])
    except EngramError as exc:
        _fail(str(exc))
    console.print(f"accepted {len(handle.runs)} item(s) into dataset [bold]{dataset}[/bold]")
    if not wait:
        for run in handle.runs:
            console.print(f"  run {run.run_id}  {run.name or ''}{'  (duplicate)' if run.duplicate else ''}")
        return
    from engram.cli.progress import follow_runs

    statuses = follow_runs(console, handle.runs)
    failed = [s for s in statuses if s.status == "failed"]
    for s in failed:
        console.print(f"[red]run {s.run_id} failed:[/red] {s.error}")
    raise typer.Exit(1 if failed else 0)


@app.command()
def status(
    run_id: str = typer.Argument(None),
    dataset: str = typer.Option(None, "--dataset", "-d"),
    user: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Per-stage progress of a run, or of a dataset's runs."""
    prepare_services()
    import uuid

    from engram.tasks.client import EngramClient, EngramError

    client = EngramClient(local_reads=True)
    queues = None
    try:
        if run_id:
            runs = [client.run_status(uuid.UUID(run_id), user)]
        else:
            overview = client.dataset_overview(dataset, user)
            runs, queues = overview.runs, overview.queues
    except (EngramError, ValueError) as exc:
        _fail(str(exc))
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
    from engram.tasks.client import EngramClient, EngramError

    extra = {"session_id": session, "include_history": history or None, "skills": skill or None, "tools": tool or None,
             "as_of": f"{as_of}-01-01T00:00:00Z" if as_of and as_of.isdigit() else as_of}
    try:
        result = EngramClient().recall(question, datasets=dataset, user=user, search_type=search_type, top_k=top_k,
                                       **{k: v for k, v in extra.items() if v is not None})
    except EngramError as exc:
        _fail(str(exc))
    if as_json:
        console.print_json(result.model_dump_json())
        return
    from engram.cli.progress import render_recall

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
    from engram.cli.progress import render_eval
    from engram.pipelines.recall.evaluate import BadQAFile, evaluate, load_qa
    from engram.cli.demo import DEMO_QA
    from engram.tasks.client import EngramClient

    qa_file = qa_file or DEMO_QA
    try:
        qa = load_qa(qa_file.read_text().splitlines())
    except BadQAFile as exc:
        _fail(f"{qa_file}: {exc}")
    client = EngramClient(local_reads=True)
    report = evaluate(qa, lambda q: client.recall(q, datasets=dataset, user=user, search_type=search_type,
                                                   top_k=top_k), top_k)
    report.update(qa_file=str(qa_file), datasets=dataset, search_type=search_type)
    out = out or Path(f"eval-{'-'.join(dataset)}.json")
    out.write_text(json.dumps(report, indent=2, default=str))
    render_eval(console, report, out)


@app.command()
def demo(corpus: Path = typer.Option(None, help="directory of documents (default: the shipped demo corpus)")) -> None:
    """Start services and a worker, remember a corpus, answer questions, shut down."""
    from engram.cli.demo import run_demo

    raise typer.Exit(run_demo(console, corpus))


# ------------------------------------------------------------------ sessions and improve


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
    from engram.cli.sessions import render_run, wait_for_run
    from engram.tasks.client import EngramClient, EngramError

    client = EngramClient(local_reads=True)
    try:
        result = client.improve(dataset, session_ids=session, user=user)
        run = wait_for_run(client, str(result.run_id), user=user) if wait and result.status == "started" else None
    except EngramError as exc:
        _fail(str(exc))
    if as_json:
        console.print_json(json.dumps({"result": result.model_dump(mode="json"), "run": run}))
        return
    console.print(f"improve: [bold]{result.status}[/bold]"
                  + (f" (run {result.run_id}, fence {result.fence})" if result.run_id else "")
                  + (f" — {result.reason}; rerun requested" if result.rerun_requested else ""))
    if run is not None:
        render_run(console, run)


@app.command()
def sessions(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    session: str = typer.Option(None, "--session", "-s"),
    user: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Sessions of a dataset: entries, pending work, last improve, claim holders, last run."""
    prepare_services()
    from engram.cli.sessions import render_learning, render_sessions
    from engram.tasks.client import EngramClient, EngramError

    try:
        view = EngramClient().sessions(dataset, session_id=session, user=user)
    except EngramError as exc:
        _fail(str(exc))
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
    from engram.tasks.client import EngramClient, EngramError

    try:
        result = EngramClient().feedback(entry_id, verdict, score=score, user=user)
    except EngramError as exc:
        _fail(str(exc))
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
    from engram.tasks.client import EngramClient, EngramError

    try:
        result = getattr(EngramClient(), action)(dataset, grantee, permissions or None, user=user)
    except EngramError as exc:
        _fail(str(exc))
    console.print(f"{grantee} on {dataset}: {', '.join(result['permissions']) or 'no grants'}")


# ------------------------------------------------------------------ capture lane and MCP


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
    from engram.tasks.client import EngramClient, EngramError

    fields = {}
    for item in field:
        name, sep, value = item.partition("=")
        if not sep:
            _fail(f"--field takes name=value, got {item!r}")
        fields[name.strip()] = value
    extra = {"content": content, "type": obj_type, "template": template, "template_fields": fields or None,
             "project": project, "tags": tag, "summary": summary, "entities": entities, "properties": properties}
    try:
        done = EngramClient().capture(title, dataset=dataset, user=user, wait=True,
                                      **{k: v for k, v in extra.items() if v is not None})
    except (EngramError, TimeoutError) as exc:
        _fail(str(exc))
    console.print(f"captured {done.object_id}: {done.status} "
                  + " ".join(f"{s.stage}:{s.status}" for s in done.stages))
    for s in done.stages:
        if s.error:
            console.print(f"[red]{s.stage} failed:[/red] {s.error}")


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
    from engram.cli.mcp_server import Authority, EngramTools, build_server, token_auth
    from engram.tasks.client import EngramClient

    if tokens is not None and not http:
        _fail("--tokens applies to --http; a stdio server acts as --user")
    try:
        authority = Authority.from_file(tokens) if tokens else Authority(user or os.environ.get("ENGRAM_MCP_USER")
                                                                          or "default")
    except ValueError as exc:
        _fail(str(exc))
    tools = EngramTools(authority, EngramClient(timeout=timeout), timeout)
    host = "127.0.0.1"
    auth, verifier = token_auth(authority.tokens, host, port) if tokens else (None, None)
    server = build_server(tools, auth=auth, token_verifier=verifier)
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run()


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        # Celery result handles left in reference cycles unsubscribe from Redis when collected;
        # collect them now, not during interpreter shutdown when imports no longer work.
        import gc

        gc.collect()


if __name__ == "__main__":
    main()
