"""`engram demo`: the README's first command, end to end on the embedded default."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from engram.models.search import SearchType
from engram.adapters.services import embedded_to_start, stop_embedded
from engram.cli.app import prepare_services
from engram.cli.progress import follow_runs, render_recall
from engram.settings import get_settings
from engram.tasks.client import EngramClient, RunHandle

# Package data of the CLI (pyproject), so a built install (the Docker image) has them too.
DEMO_CORPUS = Path(__file__).resolve().parent / "data" / "demo"
DEMO_QA = DEMO_CORPUS.parent / "demo_qa.jsonl"
# (question, search type, include_history): the CEO question shows the earlier holders too.
QUESTIONS = [
    ("Who is the CEO of Harbor Dynamics?", SearchType.TRIPLET_COMPLETION.value, True),
    ("When was Alder Bay University founded?", SearchType.TRIPLET_COMPLETION.value, False),
    ("What happened during the Great Flood of 2011?", SearchType.CHUNKS.value, False),
]
# One CEO at a time: a newer holder supersedes the earlier ones (docs/time.md).
FUNCTIONAL = {"ceo_of": "target"}

# Printed after the answers: the memory stays (the embedded servers keep it in the state directory).
NEXT_STEPS = """\
engram status -d demo             the demo's runs, stage by stage
engram recall "Who founded Harbor Dynamics?" -d demo     your own question
engram worker                     a worker (another terminal), then Flower:
FLOWER_BASIC_AUTH=me:secret engram flower --port 5555    http://localhost:5555
engram doctor                     services, schema, embedder, LLM settings
README.md (Quick start): a producer of your own; docs/: the rest"""


def start_worker(concurrency: int = 2, loglevel: str = "warning", extra_env: dict | None = None,
                 log_path: Path | None = None, extra_args: tuple[str, ...] = ()) -> subprocess.Popen:
    env = dict(os.environ, **(extra_env or {}))
    log = open(log_path, "ab") if log_path else None
    return subprocess.Popen(
        [sys.executable, "-m", "engram.cli", "worker", f"--concurrency={concurrency}", f"--loglevel={loglevel}",
         *extra_args],
        env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT if log else None,
    )


def wait_for_worker(app, proc: subprocess.Popen, timeout: float = 600.0, workers: int = 1) -> None:
    """Until `workers` Celery workers answer a ping (one `engram worker` runs a pipeline and an
    api worker: the first to answer is not yet all of it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited with code {proc.returncode}")
        if len(app.control.ping(timeout=0.5) or []) >= workers:
            return
    raise TimeoutError(f"fewer than {workers} workers answered a ping in time")


def stop_worker(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)  # warm shutdown of the main process; it stops its pool
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def current_first(result):
    """The facts valid now before the superseded ones (kept in their order otherwise)."""
    return result.model_copy(update={"items": sorted(result.items, key=lambda item: bool(item.superseded))})


def remember_demo(client, dataset: str = "demo", user: str = "default", corpus: Path | None = None):
    """Remember the demo corpus as `engram demo` does (one CEO at a time, each document checked
    for contradictions); returns the remember handle."""
    return client.remember(dataset=dataset, user=user, paths=[corpus or DEMO_CORPUS], options={
        "functional_relationships": FUNCTIONAL, "contradiction_check": True})


def settle_demo(client, dataset: str = "demo", user: str = "default") -> list:
    """Documents ingested side by side each saw only what was loaded before them: one pass over
    the whole dataset settles who succeeded whom and which sources disagree. [(task, status)]."""
    out = []
    for task, extra in (("engram.maintenance.supersede", {"functional_relationships": FUNCTIONAL}),
                        ("engram.maintenance.check_contradictions", {})):
        accepted = client.call(task, dataset=dataset, user=user, **extra)
        out.append((task, RunHandle(client, uuid.UUID(str(accepted["run_id"])), user=user).wait()))
    return out


def run_demo(console: Console, corpus: Path | None) -> int:
    corpus = corpus or DEMO_CORPUS
    settings = get_settings()

    started = embedded_to_start(settings)
    console.rule("Engram demo")
    urls = prepare_services()
    console.print(f"postgres: {'embedded' if urls.embedded_postgres else 'external'}; "
                  f"redis: {'embedded' if urls.embedded_redis else 'external'}; state in {settings.state_dir}")
    if not settings.llm_model:
        console.print("[yellow]No LLM configured: running on the offline default (deterministic local "
                      "extractor; answers are retrieved context).[/yellow]")
    from engram.celery_app import app

    log_path = settings.state_dir / "demo-worker.log"
    proc = start_worker(log_path=log_path)
    console.print(f"worker started (2 pipeline processes + the api thread pool); its log: {log_path}")
    try:
        wait_for_worker(app, proc)
        client = EngramClient(app, local_reads=True)
        handle = remember_demo(client, corpus=corpus)
        console.print(f"remembering {len(handle.runs)} documents from {corpus}")
        statuses = follow_runs(console, handle.runs)
        failed = [s for s in statuses if s.status != "completed"]
        console.print(f"{len(statuses) - len(failed)} completed, {len(failed)} failed")
        for task, done in settle_demo(client):
            console.print(f"{task.rsplit('.', 1)[1].replace('_', ' ')} over the dataset: {done.status}")
        for question, search_type, history in QUESTIONS:
            console.rule(question)
            result = client.recall(question, datasets=["demo"], search_type=search_type, top_k=3,
                                   include_history=history)
            render_recall(console, current_first(result), superseded_label="former")
            disputed = {c.get("fact") for item in result.items for c in item.conflicts}
            if disputed:
                console.print("[red]The sources disagree:[/red] " + escape("; ".join(sorted(
                    {item.text.strip() for item in result.items if item.conflicts} | disputed))))
        console.rule("Where to look next")
        console.print(NEXT_STEPS, markup=False, highlight=False)
        return 1 if failed else 0
    finally:
        stop_worker(proc)
        stop_embedded(settings, started)
        console.print("worker stopped; demo done")
