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
