"""`engram mcp` over stdio, driven by the official MCP SDK client against a real worker."""

from __future__ import annotations

import json
import sys
import uuid

import anyio
import pytest

from engram.cli.mcp_server import TOOLS
from engram.tasks.client import EngramError


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_an_mcp_client_lists_captures_recalls_and_gets_clear_errors(worker, dataset_name):
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    user = f"mcp-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in worker.env.items()
           if k.startswith(("ENGRAM_", "HF_", "LITELLM_")) or k in ("PATH", "HOME", "PYTHONPATH")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "engram.cli", "mcp", "--user", user], env=env)
    seen: dict = {}

    async def session():
        async with Client(params, read_timeout_seconds=180) as client:
            seen["tools"] = {t.name for t in (await client.list_tools()).tools}
            seen["capture"] = await client.call_tool("capture", {
                "dataset": dataset_name, "title": "Queue for background jobs", "template": "decision",
                "template_fields": {"chosen": "Celery on Redis", "rationale": "already in the stack"},
                "entities": [{"name": "Celery", "type": "technology"}], "tags": ["infra"],
                # Not an argument: the server acts as its configured user whatever a caller says.
                "user": "someone-else"})
            seen["recall"] = await client.call_tool("recall", {
                "question": "Which queue runs background jobs?", "datasets": [dataset_name],
                "object_types": ["decision"], "tags": ["infra"]})
            seen["bad"] = await client.call_tool("capture", {"dataset": dataset_name, "title": "Crash",
                                                             "template": "fix", "template_fields": {}})
            seen["bad_json"] = await client.call_tool("capture", {"dataset": dataset_name, "title": "x",
                                                                  "content": "y", "properties": "{nope"})

    anyio.run(session)
    assert seen["tools"] == set(TOOLS)
    assert not seen["capture"].is_error, _text(seen["capture"])
    captured = json.loads(_text(seen["capture"]))
    assert captured["status"] == "complete" and captured["type"] == "decision"
    assert not seen["recall"].is_error, _text(seen["recall"])
    [item] = json.loads(_text(seen["recall"]))["items"]
    assert item["capture"]["id"] == captured["object_id"] and item["capture"]["type"] == "decision"
    assert ("mentions", "Celery") in {(e["predicate"], e["other_name"]) for e in item["capture"]["edges"]}
    assert seen["bad"].is_error and "template 'fix' requires symptom" in _text(seen["bad"])
    assert seen["bad_json"].is_error and "properties is not valid JSON" in _text(seen["bad_json"])
    # The dataset is the configured user's: nobody else named in arguments got it.
    with pytest.raises(EngramError, match="does not exist for user 'someone-else'"):
        worker.client.recall("queue", datasets=[dataset_name], user="someone-else")
    assert worker.client.recall("queue", datasets=[dataset_name], user=user, object_types=["decision"]).items


def test_a_partial_capture_reads_partial_through_mcp(worker, store, dataset_name):
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    from engram.tests.integration.test_engine import REFUSAL, refusing

    user = f"mcp-{uuid.uuid4().hex[:8]}"
    with store.unit_of_work() as uow:
        dataset = uow.access.create_dataset(user, dataset_name)
    env = {k: v for k, v in worker.env.items()
           if k.startswith(("ENGRAM_", "HF_", "LITELLM_")) or k in ("PATH", "HOME", "PYTHONPATH")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "engram.cli", "mcp", "--user", user], env=env)
    seen: dict = {}

    async def session():
        async with Client(params, read_timeout_seconds=180) as client:
            with refusing(store, "capture_objects", "UPDATE", dataset, also="NEW.stage = 'normalized'"):
                seen["capture"] = await client.call_tool("capture", {
                    "dataset": dataset_name, "title": "Pick a queue", "template": "decision",
                    "template_fields": {"chosen": "Redis streams"}})
            captured = json.loads(_text(seen["capture"]))
            seen["status"] = await client.call_tool("status", {"run_id": captured["run_id"]})
            seen["listed"] = await client.call_tool("status", {"dataset": dataset_name})

    anyio.run(session)
    assert not seen["capture"].is_error, _text(seen["capture"])
    captured = json.loads(_text(seen["capture"]))
    assert captured["status"] == "partial"
    assert [s["status"] for s in captured["stages"] if s["stage"] == "normalize"] == ["failed"]
    [run] = json.loads(_text(seen["status"]))["runs"]
    assert run["status"] == "partial" and REFUSAL in run["error"]
    assert [r["status"] for r in json.loads(_text(seen["listed"]))["runs"]] == ["partial"]


def test_http_server_maps_bearer_tokens_to_users_and_refuses_others(worker, dataset_name, tmp_path):
    import socket
    import subprocess
    import time

    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    user = f"mcp-http-{uuid.uuid4().hex[:8]}"
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"s3cret-token": user}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "mcp-http.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "engram.cli", "mcp", "--http", "--port", str(port),
                             "--tokens", str(tokens)], env=worker.env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                refused = httpx2.post(url, json={}, headers={"Authorization": "Bearer wrong"})
                break
            except httpx2.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "mcp-http.log").read_text()
                time.sleep(0.5)
        assert refused.status_code == 401
        assert httpx2.post(url, json={}).status_code == 401
        seen = {}

        async def session():
            http = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}, timeout=180)
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=180) as client:
                seen["capture"] = await client.call_tool("capture", {
                    "dataset": dataset_name, "title": "HTTP capture", "content": "Captured over HTTP.",
                    "summary": "Over HTTP."})

        anyio.run(session)
        assert not seen["capture"].is_error, _text(seen["capture"])
        assert json.loads(_text(seen["capture"]))["status"] == "complete"
        assert worker.client.recall("HTTP", datasets=[dataset_name], user=user, object_types=["idea"]).items
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
