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
