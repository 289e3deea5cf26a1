"""Every block of README.md and docs/*.md marked `<!-- runnable -->` runs verbatim and exits 0:
from the repository root, in a bare process (only the URLs the Quick start tells the reader to
set), against a real worker with the offline extractor. A snippet that drifts fails here."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from doc_snippets import ROOT, runnable_blocks

BLOCKS = runnable_blocks()
IMPORTS_ENGRAM = re.compile(r"^\s*(from|import) engram\b", re.M)


def bare_env(services, worker, home) -> dict[str, str]:
    env = {
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
        "HOME": str(home),
        # What the Quick start tells the reader to set: the Redis the worker uses.
        "ENGRAM_REDIS_URL": worker.redis_url,
        # The test run's stand-in for the default ~/.engram (its embedded servers) and its
        # offline switches; nothing else of the test process leaks in.
        "ENGRAM_STATE_DIR": os.environ["ENGRAM_STATE_DIR"],
        "HF_HUB_OFFLINE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    if not services.embedded_postgres:  # the suite runs against an external PostgreSQL
        env["ENGRAM_DATABASE_URL"] = services.database_url
    return env


def clone_like(tmp_path):
    """A scratch working directory that looks like the clone's root (its top-level entries linked),
    so `cli/data/demo` resolves, while what a snippet writes (an eval report) stays out of it."""
    cwd = tmp_path / "clone"
    cwd.mkdir()
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (cwd / entry.name).symlink_to(entry)
    return cwd


def test_there_are_runnable_blocks():
    assert {b.lang for b in BLOCKS} == {"bash", "python"}
    assert any(b.path.name == "README.md" and b.section == "Quick start" for b in BLOCKS)


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_the_runnable_block_runs_verbatim(block, services, worker, tmp_path):
    env = bare_env(services, worker, tmp_path)
    if block.lang == "bash":
        argv = ["bash", "-e", "-c", block.code]
        engram_on_path = True
    else:
        engram_on_path = bool(IMPORTS_ENGRAM.search(block.code))
        # A producer that needs only Celery runs isolated: it could not import Engram if it tried.
        argv = [sys.executable, "-c", block.code] if engram_on_path else [sys.executable, "-I", "-c", block.code]
    if engram_on_path and os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]  # Engram as this test run imports it
    done = subprocess.run(argv, env=env, cwd=clone_like(tmp_path), capture_output=True, text=True, timeout=1400)
    assert done.returncode == 0, f"{block.id} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


AMQP_URL = os.environ.get("ENGRAM_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def _rabbitmq_answers() -> bool:
    import kombu

    try:
        with kombu.Connection(AMQP_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1)
        return True
    except Exception:
        return False


@pytest.mark.timeout(900)
def test_the_quick_start_runs_verbatim_with_rabbitmq_as_broker(services, spawn_worker, tmp_path):
    """The Quick start's shell and producer, one after the other in one shell as a reader pastes them,
    with ENGRAM_BROKER_URL exported (the worker was started with it too): the producer sends over
    RabbitMQ and reads results from Redis. The worker takes the default queue names, as the reader's does."""
    if not _rabbitmq_answers():
        pytest.skip(f"no RabbitMQ at {AMQP_URL} (set ENGRAM_TEST_AMQP_URL)")
    quick = [b for b in BLOCKS if b.path.name == "README.md" and b.section == "Quick start"]
    shell, producer = quick[0], quick[1]
    assert (shell.lang, producer.lang) == ("bash", "python") and "engram services env" in shell.code
    handle = spawn_worker({"ENGRAM_BROKER_URL": AMQP_URL}, concurrency=1)
    try:
        env = {**bare_env(services, handle, tmp_path), "ENGRAM_BROKER_URL": AMQP_URL}
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]  # `engram services env`: Engram as this run imports it
        script = tmp_path / "producer.py"
        script.write_text(producer.code)
        pasted = f'{shell.code}\ntest "${{ENGRAM_BROKER_URL%%:*}}" = amqp\n"{sys.executable}" -I {script}\n'
        done = subprocess.run(["bash", "-e", "-c", pasted], env=env, cwd=clone_like(tmp_path),
                              capture_output=True, text=True, timeout=800)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert done.stdout.split()[:2] == ["accepted", "completed"], done.stdout
    finally:
        handle.stop()
        with handle.app.connection_for_write() as conn:  # leave the shared broker's default queues empty
            for queue in handle.app.conf.task_queues:
                queue.bind(conn.channel()).purge()
