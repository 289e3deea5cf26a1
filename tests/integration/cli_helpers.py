"""Running `engram` as a user does: a real CLI process, against the test's services and worker."""

from __future__ import annotations

import os
import subprocess
import sys


def engram(redis_url: str | None, *args: str, input: str | None = None, cwd=None, env: dict | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """`engram ARGS...` with the broker of `redis_url` (a worker's); stdin is `input` or empty.
    `env` adds variables; a None value unsets one."""
    full = dict(os.environ, COLUMNS="200", **({"ENGRAM_REDIS_URL": redis_url} if redis_url else {}))
    full.update(env or {})
    full = {k: v for k, v in full.items() if v is not None}
    return subprocess.run([sys.executable, "-m", "engram.cli", *args], env=full, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, input=input,
                          stdin=subprocess.DEVNULL if input is None else None)


def one_line_error(out: subprocess.CompletedProcess) -> str:
    """The run failed with exit code 1 and printed one line: `error: ... — fix: ...`, no traceback."""
    text = (out.stdout + out.stderr).strip()
    assert out.returncode == 1, text
    assert "Traceback" not in text, text
    lines = text.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and " — fix: " in lines[0], text
    return lines[0]
