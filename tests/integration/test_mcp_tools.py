"""Every `engram mcp` tool driven by the official SDK client against a real worker, over stdio
and over streamable HTTP: node-set and as_of recall, reprocess of a partial capture, a link
then the entity's dossier, browsing, skills, a dataset's export paged through, and refusals
across users."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from contextlib import asynccontextmanager

import anyio
import pytest

from engram.cli.mcp_server import TOOLS
from engram.pipelines import export
from engram.tests.integration.time_helpers import MAYOR

ELECTED = "Springfield's mayor was Maria Lopez (elected 2015)."
TOOK_OVER = "Tom Reed became mayor of Springfield in 2022."
RE_ELECTED = "Maria Lopez was re-elected mayor of Springfield in 2026."
PROCEDURE = "1. Read the alert and note the service.\n" + "2. Check the runbook for that service.\n" * 20


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


class Calls:
    """One MCP client session: `ok` expects an answer (parsed JSON), `refused` a tool error (its text)."""

    def __init__(self, client):
        self.client = client
        self.called: set[str] = set()

    async def ok(self, tool: str, **args) -> dict:
        self.called.add(tool)
        result = await self.client.call_tool(tool, args)
        assert not result.is_error, f"{tool}: {_text(result)}"
        return json.loads(_text(result))

    async def refused(self, tool: str, **args) -> str:
        self.called.add(tool)
        result = await self.client.call_tool(tool, args)
        assert result.is_error, f"{tool} answered: {_text(result)[:500]}"
        return _text(result)


@pytest.fixture(scope="module")
def world(worker):
    """A user's memory the tours read: Springfield's mayors (A -> B -> A, functional) and a skill."""
    user = f"mcp-tour-{uuid.uuid4().hex[:8]}"
    mayors = f"mayors-{uuid.uuid4().hex[:8]}"
    for doc in (ELECTED, TOOK_OVER, RE_ELECTED):
        [status] = worker.client.remember(doc, dataset=mayors, user=user, background=False, timeout=300,
                                          options={"functional_relationships": MAYOR})
        assert status.status == "completed", status
    worker.client.call("engram.skills.define", dataset=mayors, user=user, name="triage",
                       description="Triage an incident alert", procedure=PROCEDURE, tools=[])
    return {"user": user, "mayors": mayors}


def _env(worker) -> dict:
    return {k: v for k, v in worker.env.items()
            if k.startswith(("ENGRAM_", "HF_", "LITELLM_")) or k in ("PATH", "HOME", "PYTHONPATH")}


async def _export(calls: Calls, dataset: str, limit: int) -> list[dict]:
    """Every page of the dataset's export, following the cursors the pages return."""
    pages, cursor = [], None
    while True:
        page = await calls.ok("export", dataset=dataset, limit=limit, **({"cursor": cursor} if cursor else {}))
        pages.append(page)
        cursor = page["cursor"]
        if cursor is None:
            return pages


def _triplets(answer: dict) -> list[str]:
    return [i["text"] for i in answer["items"] if i["kind"] == "triplet"]


async def tour(calls: Calls, world: dict, tag: str) -> dict:
    """Every tool at least once as the world's user; returns what the checks need."""
    mayors, docs, caps = world["mayors"], f"docs-{tag}", f"caps-{tag}"
    seen: dict = {}

    # Node sets: remember two texts in two sets, recall restricted to one.
    for content, node_set in (("The harbour crane was repaired by Olsen Marine in March.", "ops"),
                              ("The harbour festival is organised by Lina Berg every June.", "events")):
        stored = await calls.ok("remember", dataset=docs, content=content, node_sets=[node_set])
        assert [r["status"] for r in stored["runs"]] == ["completed"], stored
    both = await calls.ok("recall", question="What happens at the harbour?", datasets=[docs], search_type="CHUNKS")
    assert {"crane" in i["text"] for i in both["items"]} == {True, False}
    events = await calls.ok("recall", question="What happens at the harbour?", datasets=[docs],
                            search_type="CHUNKS", node_sets=["events"])
    assert events["items"] and all("festival" in i["text"] for i in events["items"]), events

    # as_of and history: who was mayor when.
    question = "Who is the mayor of Springfield?"
    now = await calls.ok("recall", question=question, datasets=[mayors], search_type="TRIPLET_COMPLETION")
    assert [t.split(" mayor of")[0] for t in _triplets(now)] == ["Maria Lopez"], now
    then = await calls.ok("recall", question=question, datasets=[mayors], search_type="TRIPLET_COMPLETION",
                          as_of="2023-06-01T00:00:00Z")
    assert [t.split(" mayor of")[0] for t in _triplets(then)] == ["Tom Reed"], then
    history = await calls.ok("recall", question=question, datasets=[mayors], search_type="TRIPLET_COMPLETION",
                             include_history=True)
    assert {t.split(" mayor of")[0] for t in _triplets(history)} == {"Maria Lopez", "Tom Reed"}
    assert "as_of" in await calls.refused("recall", question=question, datasets=[mayors], as_of="last tuesday")

    # The mayors' export, page after page: the header first, then every row once, in file order; header
    # and records as lines are a file `engram import` reads.
    pages = await _export(calls, mayors, limit=20)
    head = pages[0]["header"]
    assert len(pages) > 2 and all(p["header"] is None for p in pages[1:]), [len(p["records"]) for p in pages]
    assert all(len(p["records"]) <= 20 for p in pages) and head["version"] == export.VERSION
    assert head["dataset"]["name"] == mayors and head["owner"] == world["user"]
    records = [r for p in pages for r in p["records"]]
    tables = Counter(r["table"] for r in records)
    assert tables == {t: n for t, n in head["counts"].items() if n and t != "datasets"}, (tables, head["counts"])
    assert {"data_items", "chunks", "entities", "edges", "edge_intervals", "skills", "stage_runs"} <= set(tables)
    assert [export.TABLES.index(t) for t in tables] == sorted(export.TABLES.index(t) for t in tables)
    _, rows = export.parse_jsonl([json.dumps(head), *(json.dumps(r) for r in records)])
    assert sum(1 for _ in rows) == len(records)
    assert [r["row"]["name"] for r in records if r["table"] == "skills"] == ["triage"]
    assert {"maria_lopez", "tom_reed", "springfield"} <= {r["row"]["name"] for r in records if r["table"] == "entities"}
    assert "is not one an export page returned" in await calls.refused("export", dataset=mayors,
                                                                       cursor='{"table": "secrets"}')
    assert "limit" in await calls.refused("export", dataset=mayors, limit=0)

    # Captures, a link by hand, then the dossier, the neighbourhood and the object itself.
    decision = await calls.ok("capture", dataset=caps, title="Queue for background jobs", template="decision",
                              template_fields={"chosen": "Celery", "rationale": "already in the stack"},
                              entities=[{"name": "Celery", "type": "technology"}], tags=["infra"], project="engram")
    lesson = await calls.ok("capture", dataset=caps, title="Broker outage", type="lesson", tags=["infra"],
                            content="The broker went down for an hour.", summary="A broker outage.",
                            entities=[{"name": "Redis", "type": "technology"}])
    assert decision["status"] == lesson["status"] == "complete"
    seen["decision"] = decision["object_id"]
    linked = await calls.ok("link", dataset=caps, source=decision["object_id"], target="redis",
                            predicate="depends_on", note="the broker")
    assert linked["created"] and linked["predicate"] == "dependsOn"
    assert "unknown predicate 'likes'" in await calls.refused("link", dataset=caps, source="Celery", target="Redis",
                                                              predicate="likes")
    assert "no entity or object 'Kafka'" in await calls.refused("link", dataset=caps, source="Celery",
                                                                target="Kafka", predicate="supports")
    assert "two different ends" in await calls.refused("link", dataset=caps, source="Redis", target="redis",
                                                       predicate="supports")
    redis = await calls.ok("entity", dataset=caps, entity="Redis")
    facts = {(f["predicate"], f["source_name"], f["origin"], f["direction"]) for f in redis["current"]}
    assert facts == {("dependsOn", "Queue for background jobs", "caller", "in"),
                     ("mentions", "Broker outage", "entity", "in")}, redis
    hood = await calls.ok("graph", dataset=caps, entity="Redis", depth=2)
    depths = {n["name"]: n["depth"] for n in hood["nodes"]}
    assert depths == {"Redis": 0, "Queue for background jobs": 1, "Broker outage": 1, "Celery": 2}, hood
    assert not hood["truncated"]
    capped = await calls.ok("graph", dataset=caps, entity="Redis", depth=2, limit=2)
    assert capped["truncated"] and len(capped["edges"]) == 2
    obj = await calls.ok("read", dataset=caps, id=decision["object_id"])
    assert obj["kind"] == "object" and obj["object"]["type"] == "decision" and "Celery" in obj["text"]
    assert {(f["predicate"], f["direction"], f["origin"]) for f in obj["links"]} == {
        ("dependsOn", "out", "caller"), ("mentions", "out", "entity")}
    # A contradiction stated by hand shows in the object's dossier, beside (not among) its facts.
    await calls.ok("link", dataset=caps, source="Broker outage", target=decision["object_id"],
                   predicate="contradicts", confidence=0.8)
    dossier = await calls.ok("entity", dataset=caps, entity=decision["object_id"])
    assert {(f["predicate"], f["target_name"]) for f in dossier["current"]} == {
        ("dependsOn", "Redis"), ("mentions", "Celery")}
    [conflict] = dossier["contradictions"]
    assert sorted(conflict["texts"]) == ["Broker outage", "Queue for background jobs"]
    assert conflict["confidence"] == 0.8

    # Lists, paged; a document read back.
    page = await calls.ok("list", dataset=caps, tag="infra", limit=1)
    assert page["total"] == 2 and page["next_offset"] == 1 and len(page["items"]) == 1
    rest = await calls.ok("list", dataset=caps, tag="infra", offset=1, limit=1)
    assert rest["next_offset"] is None and rest["items"][0]["id"] != page["items"][0]["id"]
    assert [i["title"] for i in (await calls.ok("list", dataset=caps, type="decision"))["items"]] == [
        "Queue for background jobs"]
    ops = await calls.ok("list", dataset=docs, kind="documents", tag="ops")
    [crane] = ops["items"]
    doc = await calls.ok("read", dataset=docs, id=crane["id"], max_chars=20)
    assert doc["kind"] == "document" and doc["node_sets"] == ["ops"] and doc["next_offset"] == 20
    assert doc["text"] == "The harbour crane wa"
    assert "project filters captured objects" in await calls.refused("list", dataset=docs, kind="documents",
                                                                     project="x")

    # The time dossier: current and superseded facts with their intervals and sources.
    springfield = await calls.ok("entity", dataset=mayors, entity="Springfield")
    current = {f["source_name"]: f for f in springfield["current"] if f["predicate"] == "mayor_of"}
    past = {f["source_name"]: f for f in springfield["superseded"] if f["predicate"] == "mayor_of"}
    assert set(current) == {"Maria Lopez"} and set(past) == {"Tom Reed"}, springfield
    assert [(i["starts_at"][:4], (i["ends_at"] or "")[:4]) for i in current["Maria Lopez"]["intervals"]] == [
        ("2015", "2022"), ("2026", "")]
    assert past["Tom Reed"]["status"] == "superseded" and past["Tom Reed"]["valid_to"].startswith("2026")
    assert len(springfield["sources"]) == 3 and all(f["sources"] for f in current.values())

    # Datasets, skills, and the older tools.
    names = {d["name"]: d for d in (await calls.ok("datasets"))["datasets"]}
    assert {mayors, docs, caps} <= set(names) and names[caps]["own"] and names[caps]["counts"]["objects"] == 2
    assert names[caps]["permissions"] == ["read", "write", "delete", "share"]
    skills = await calls.ok("skills_list", dataset=mayors)
    assert [s["name"] for s in skills["skills"]] == ["triage"] and skills["next_offset"] is None
    first = await calls.ok("skill_load", dataset=mayors, name="triage", max_chars=100)
    more = await calls.ok("skill_load", dataset=mayors, name="triage", offset=first["next_offset"],
                          max_chars=len(PROCEDURE))
    assert first["procedure"] + more["procedure"] == PROCEDURE and more["next_offset"] is None
    assert "no skill 'nope'" in await calls.refused("skill_load", dataset=mayors, name="nope")
    redone = await calls.ok("capture_reprocess", dataset=caps, object_id=decision["object_id"])
    assert redone["status"] == "complete"
    runs = await calls.ok("status", dataset=caps)
    assert {r["status"] for r in runs["runs"]} == {"completed"}
    turn = await calls.ok("remember", dataset=docs, session_id="s1", question="Who fixed the crane?",
                          answer="Olsen Marine.")
    assert (await calls.ok("feedback", entry_id=turn["entry_id"], feedback="helpful"))
    assert (await calls.ok("sessions", dataset=docs, session_id="s1"))
    forgotten = await calls.ok("forget", dataset=docs, data_item_id=crane["id"])
    assert forgotten
    assert "no object or document" in await calls.refused("read", dataset=docs, id=crane["id"])
    return seen


async def refusals(calls: Calls, world: dict, tag: str) -> None:
    """Another user: nothing of the world's user is reachable by name or id."""
    caps, mayors = f"caps-{tag}", world["mayors"]
    user = world["user"]
    names = {d["name"] for d in (await calls.ok("datasets"))["datasets"]}
    assert not names & {caps, mayors}
    for tool, args in (("entity", {"dataset": mayors, "entity": "Springfield"}),
                       ("graph", {"dataset": mayors, "entity": "Springfield"}),
                       ("list", {"dataset": caps}),
                       ("skills_list", {"dataset": mayors}),
                       ("export", {"dataset": mayors}),
                       ("link", {"dataset": caps, "source": "Celery", "target": "Redis", "predicate": "supports"})):
        assert "does not exist for user" in await calls.refused(tool, **args), tool
    assert user not in json.dumps(await calls.ok("datasets"))


@asynccontextmanager
async def stdio(worker, user: str):
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "engram.cli", "mcp", "--user", user],
                                   env=_env(worker))
    async with Client(params, read_timeout_seconds=300) as client:
        yield Calls(client)


def test_every_tool_over_stdio_with_a_partial_capture_repaired(worker, world, store):
    from engram.tests.integration.test_engine import REFUSAL, refusing

    tag = uuid.uuid4().hex[:8]
    partial_ds = f"partial-{tag}"
    with store.unit_of_work() as uow:
        dataset = uow.access.create_dataset(world["user"], partial_ds)
    called: set[str] = set()

    async def session():
        async with stdio(worker, world["user"]) as calls:
            assert {t.name for t in (await calls.client.list_tools()).tools} == set(TOOLS)
            with refusing(store, "capture_objects", "UPDATE", dataset, also="NEW.stage = 'normalized'"):
                broken = await calls.ok("capture", dataset=partial_ds, title="Pick a queue", template="decision",
                                        template_fields={"chosen": "Redis streams"})
            assert broken["status"] == "partial"
            [run] = (await calls.ok("status", run_id=broken["run_id"]))["runs"]
            assert run["status"] == "partial" and REFUSAL in run["error"]
            repaired = await calls.ok("capture_reprocess", dataset=partial_ds, object_id=broken["object_id"])
            assert repaired["status"] == "complete" and repaired["run_id"] == broken["run_id"]
            assert {s["stage"]: s["status"] for s in repaired["stages"]}["normalize"] == "completed"
            obj = await calls.ok("read", dataset=partial_ds, id=broken["object_id"])
            assert obj["object"]["stage"] == "reasoned"
            await tour(calls, world, tag)
            called.update(calls.called)
        async with stdio(worker, f"mcp-other-{tag}") as other:
            await refusals(other, world, tag)
            assert "does not exist for user" in await other.refused(
                "capture_reprocess", dataset=partial_ds, object_id=broken["object_id"])
            called.update(other.called)

    anyio.run(session)
    assert called == set(TOOLS)  # every tool was driven


def test_every_tool_over_http_and_users_stay_apart(worker, world, tmp_path):
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    tag = uuid.uuid4().hex[:8]
    other = f"mcp-other-{tag}"
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"owner-token": world["user"], "other-token": other}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "mcp-http.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "engram.cli", "mcp", "--http", "--port", str(port),
                             "--tokens", str(tokens)], env=worker.env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/mcp"
    called: set[str] = set()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx2.post(url, json={})
                break
            except httpx2.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "mcp-http.log").read_text()
                time.sleep(0.5)

        @asynccontextmanager
        async def as_token(token: str):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=300)
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300) as client:
                yield Calls(client)

        async def session():
            async with as_token("owner-token") as owner:
                seen = await tour(owner, world, tag)
                called.update(owner.called)
            async with as_token("other-token") as calls:
                await refusals(calls, world, tag)
                # The other user's own dataset of the same name does not open the owner's object.
                await calls.ok("capture", dataset=f"caps-{tag}", title="Mine", content="My own note.",
                               summary="Mine.")
                assert "no object or document" in await calls.refused("read", dataset=f"caps-{tag}",
                                                                      id=seen["decision"])
                called.update(calls.called)
            worker.client.share(world["mayors"], other, ["read"], user=world["user"])
            async with as_token("other-token") as calls:
                shared = {d["name"]: d for d in (await calls.ok("datasets"))["datasets"]}[world["mayors"]]
                assert not shared["own"] and shared["permissions"] == ["read"] and shared["owner"] == world["user"]
                assert (await calls.ok("entity", dataset=world["mayors"], entity="Maria Lopez"))["current"]
                # A reader may export what was shared with it (the read grant), page by page.
                first = await calls.ok("export", dataset=world["mayors"], limit=1)
                assert first["header"]["owner"] == world["user"] and len(first["records"]) == 1 and first["cursor"]
                assert "has no write grant" in await calls.refused(
                    "link", dataset=world["mayors"], source="Maria Lopez", target="Springfield", predicate="supports")

        anyio.run(session)
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    assert called == set(TOOLS)
