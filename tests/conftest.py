"""Shared test set-up. Unit tests touch nothing; integration fixtures live in integration/."""

import os
import tempfile

# Every test run gets its own state directory (embedded servers, sockets), created before
# any engram import reads settings. A short /tmp path keeps unix socket paths short.
if "ENGRAM_TEST_KEEP_STATE_DIR" not in os.environ:
    os.environ["ENGRAM_STATE_DIR"] = tempfile.mkdtemp(prefix="engram-t-", dir="/tmp")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
for _name in ("ENGRAM_LLM_MODEL",):
    os.environ.pop(_name, None)


def pytest_sessionfinish(session, exitstatus):
    """Embedded servers this run started in its own state directory stop with it, whoever
    started them (the integration fixture, or a unit test whose Celery app read its
    configuration), and the directory goes: a partial run leaves no server behind."""
    import shutil
    from pathlib import Path

    state = Path(os.environ.get("ENGRAM_STATE_DIR", ""))
    if "ENGRAM_TEST_KEEP_STATE_DIR" in os.environ or not state.name.startswith("engram-t-") or not state.is_dir():
        return
    from engram.adapters.services import stop_embedded_postgres, stop_embedded_redis
    from engram.settings import get_settings, reset_settings

    reset_settings()
    settings = get_settings()
    if settings.state_dir == state:
        stop_embedded_postgres(settings)
        stop_embedded_redis(settings)
        shutil.rmtree(state, ignore_errors=True)
