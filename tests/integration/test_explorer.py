"""`engram explorer` through Starlette's TestClient against a real worker: login and logout,
every page as HTML and as JSON, and a second user's token seeing no trace of the first user's
dataset (pages, JSON, the graph)."""

from __future__ import annotations

import time
import uuid

import pytest
from starlette.testclient import TestClient

from engram.cli.demo import DEMO_CORPUS, FUNCTIONAL, settle_demo
from engram.cli.explorer import create_app

JSON = {"Accept": "application/json"}
CHAT = [{"speaker": "Mara", "text": "Did you hear Harbor Dynamics named a new CEO?"},
        {"speaker": "Ilse", "text": "Yes, the board announced it yesterday in Port Alder."}]


@pytest.fixture(scope="module")
def world(worker):
    """Alice's dataset: the demo's two Harbor Dynamics leadership documents (one CEO at a time), a
    chat, two captured objects linked by hand, a skill and a session turn. Bob has nothing."""
    tag = uuid.uuid4().hex[:8]
    alice, bob, name = f"ex-alice-{tag}", f"ex-bob-{tag}", f"explored-{tag}"
    client = worker.client
    statuses = client.remember(
        dataset=name, user=alice, background=False, timeout=600, options={"functional_relationships": FUNCTIONAL},
        paths=[DEMO_CORPUS / "04-harbor-dynamics-leadership-2020.md",
               DEMO_CORPUS / "05-harbor-dynamics-new-ceo-2024.md"],
        items=[{"name": "chat", "turns": CHAT, "started_at": "2024-03-04T10:00:00+00:00"}])
    assert {s.status for s in statuses} == {"completed"}, statuses
    settle_demo(client, dataset=name, user=alice)
    decision = client.capture("Keep the headquarters in Eastquay", dataset=name, user=alice, wait=True,
                              content="We keep the headquarters in Eastquay.", type="decision",
                              summary="Headquarters stay in Eastquay.")
    reason = client.capture("Engineers are leaving Port Alder", dataset=name, user=alice, wait=True,
                            content="Many engineers leave Port Alder for larger cities.", type="research",
                            summary="Engineers leave Port Alder.")
    client.link(name, str(decision.object_id), str(reason.object_id), "causedBy", user=alice)
    client.call("engram.skills.define", dataset=name, user=alice, name="triage", description="Triage an alert",
                procedure="1. Read the alert.\n2. Check the runbook.", tools=[])
    client.remember_turn(dataset=name, user=alice, session_id="s1", question="Who runs Harbor Dynamics?",
                         answer="Bob Lindqvist.")
    _settle(client, name, alice, cognify_runs=4)  # the three items and the turn
    carol = f"ex-carol-{tag}"
    client.share(name, carol, ["read"], user=alice)
    app = create_app(client, {"tok-alice": alice, "tok-bob": bob, "tok-carol": carol})
    return {"app": app, "name": name, "alice": alice, "bob": bob, "carol": carol, "decision": str(decision.object_id)}


def _settle(client, name: str, user: str, cognify_runs: int) -> None:
    """Until every run of the dataset ended (a session turn is remembered by a run of its own,
    started after the turn is stored)."""
    deadline = time.monotonic() + 300
    while True:
        runs = client.call("engram.status", dataset=name, user=user, limit=50)["runs"]
        if sum(r["pipeline"] == "cognify" for r in runs) >= cognify_runs and all(
                r["status"] in ("completed", "partial", "failed", "forgotten") for r in runs):
            return
        assert time.monotonic() < deadline, f"the dataset's runs did not end in 300 s: {runs}"
        time.sleep(0.5)


def _login(world, token: str) -> TestClient:
    web = TestClient(world["app"])
    answer = web.post("/login", data={"token": token, "next": "/"}, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text
    return web


def _both(web: TestClient, path: str) -> tuple[str, dict]:
    html, data = web.get(path), web.get(path, headers=JSON)
    assert html.status_code == 200 and "text/html" in html.headers["content-type"], (path, html.text[-2000:])
    assert data.status_code == 200 and data.headers["content-type"] == "application/json", (path, data.text[:500])
    return html.text, data.json()


def test_login_opens_a_session_and_logout_closes_it(world):
    web = TestClient(world["app"])
    assert web.get("/", follow_redirects=False).headers["location"] == "/login?next=/"
    assert web.get("/", headers=JSON).status_code == 401
    wrong = web.post("/login", data={"token": "nope"})
    assert wrong.status_code == 401 and "Unknown token" in wrong.text
    assert web.get("/", headers=JSON).status_code == 401
    web = _login(world, "tok-alice")
    assert [d["name"] for d in web.get("/", headers=JSON).json()["datasets"]] == [world["name"]]
    assert "HttpOnly" in web.post("/login", data={"token": "tok-alice"}, follow_redirects=False) \
        .headers["set-cookie"]
    web.post("/logout", follow_redirects=False)
    assert web.get("/", headers=JSON).status_code == 401
    # Scripts send the token itself; a login elsewhere never lets another site be the next page.
    bearer = TestClient(world["app"]).get("/", headers={**JSON, "Authorization": "Bearer tok-alice"})
    assert bearer.json()["user"] == world["alice"]
    off_site = TestClient(world["app"]).post("/login", data={"token": "tok-alice", "next": "//evil.example"},
                                             follow_redirects=False)
    assert off_site.headers["location"] == "/"


def test_every_page_answers_as_html_and_as_json(world):
    web, name = _login(world, "tok-alice"), world["name"]
    base = f"/d/{name}"
    html, data = _both(web, "/")
    counts = data["datasets"][0]["counts"]
    assert name in html and counts["facts"] > 0 and counts["objects"] == 2

    html, data = _both(web, base)
    titles = {d["name"] for d in data["documents"]["items"]}
    assert {"04-harbor-dynamics-leadership-2020.md", "05-harbor-dynamics-new-ceo-2024.md", "chat"} <= titles
    grants = {k: sorted(v) for k, v in data["dataset"]["grants"].items()}
    assert grants == {world["alice"]: ["delete", "read", "share", "write"], world["carol"]: ["read"]}
    assert data["last_runs"] and "05-harbor-dynamics-new-ceo-2024.md" in html

    html, data = _both(web, f"{base}/runs")
    cognify = [r for r in data["runs"] if r["pipeline"] == "cognify"]
    assert cognify and [s["stage"] for s in cognify[0]["stages"]][:3] == ["add", "classify", "chunk"]
    assert all(s["seconds"] is not None for r in cognify for s in r["stages"] if s["stage"] != "add")
    assert 'class="bar completed"' in html and not data["live"], [r for r in data["runs"] if r["live"]]

    chat = next(d for d in web.get(base, headers=JSON).json()["documents"]["items"] if d["name"] == "chat")
    html, data = _both(web, f"{base}/items/{chat['id']}")
    [chunk] = data["item"]["chunks"]
    assert chunk["speakers"] == ["Mara", "Ilse"] and chunk["occurred_at"].startswith("2024-03-04")
    assert any(d["phrase"] == "yesterday" for d in chunk["dates"] or []), chunk["dates"]
    assert "Harbor Dynamics" in {e["name"] for e in chunk["entities"]}
    assert "speakers Mara, Ilse" in html and "yesterday" in html

    ceo = next(d for d in web.get(base, headers=JSON).json()["documents"]["items"]
               if d["name"].startswith("05-"))
    html, data = _both(web, f"{base}/items/{ceo['id']}")
    stated = {f["text"] for f in data["item"]["facts"]}
    assert any("Bob Lindqvist" in t and "ceo" in t.lower() for t in stated), stated
    assert 'class="meta entities"' in html

    html, data = _both(web, f"{base}/entities/Harbor Dynamics")
    current = {f["source_name"] for f in data["entity"]["current"] if f["predicate"] == "ceo_of"}
    former = {f["source_name"] for f in data["entity"]["superseded"] if f["predicate"] == "ceo_of"}
    assert current == {"Bob Lindqvist"} and "Alice Moreau" in former, data["entity"]
    labels = {n["label"] for n in data["graph"]["nodes"]}
    assert {"Harbor Dynamics", "Bob Lindqvist", "Alice Moreau"} <= labels
    assert any(e["dashes"] and e["status"] == "superseded" for e in data["graph"]["edges"])
    assert 'id="graph-data"' in html and "/static/vis-network.min.js" in html
    script = web.get("/static/vis-network.min.js")  # from the installed pyvis wheel
    assert script.status_code == 200 and "Network" in script.text

    html, data = _both(web, f"{base}/recall?q=Who+is+the+CEO+of+Harbor+Dynamics%3F&top_k=5")
    result = data["result"]
    assert result["routed"] and result["items"] and result["datasets"] == [name]
    assert all("via" in i and "provenance" in i for i in result["items"])
    assert "Fused ranking" in html
    _, laned = _both(web, f"{base}/recall?q=Who+is+the+CEO+of+Harbor+Dynamics%3F&top_k=5&lanes=1")
    assert list(laned["lanes"]) == ["CHUNKS", "CHUNKS_LEXICAL"] and all(laned["lanes"].values())
    _, typed = _both(web, f"{base}/recall?q=Who+is+the+CEO%3F&search_type=TRIPLET_COMPLETION&as_of=2021&top_k=5")
    assert typed["result"]["search_type"] == "TRIPLET_COMPLETION" and not typed["result"]["routed"]

    html, data = _both(web, f"{base}/objects")
    assert {o["title"] for o in data["objects"]["items"]} == {"Keep the headquarters in Eastquay",
                                                               "Engineers are leaving Port Alder"}
    html, data = _both(web, f"{base}/items/{world['decision']}")
    assert [(f["predicate"], f["target_name"]) for f in data["item"]["links"] if f["origin"] == "caller"] \
        == [("causedBy", "Engineers are leaving Port Alder")]
    assert "Typed links" in html

    html, data = _both(web, f"{base}/skills")
    assert [s["name"] for s in data["skills"]] == ["triage"] and "Check the runbook" in html
    html, data = _both(web, f"{base}/sessions")
    assert [s["session_id"] for s in data["sessions"]] == ["s1"] and "session s1" in html


def test_a_read_grant_opens_the_dataset_to_whom_it_was_shared(world):
    carol, name = _login(world, "tok-carol"), world["name"]
    [shared] = carol.get("/", headers=JSON).json()["datasets"]
    assert (shared["name"], shared["owner"], shared["own"], shared["permissions"]) == (name, world["alice"], False,
                                                                                      ["read"])
    _, entity = _both(carol, f"/d/{name}/entities/Harbor Dynamics")
    assert "Bob Lindqvist" in {n["label"] for n in entity["graph"]["nodes"]}
    _, recalled = _both(carol, f"/d/{name}/recall?q=Who+is+the+CEO+of+Harbor+Dynamics%3F")
    assert recalled["result"]["datasets"] == [name] and recalled["result"]["items"]


def test_a_bad_parameter_is_a_clear_400(world):
    web = _login(world, "tok-alice")
    answer = web.get(f"/d/{world['name']}/runs?limit=many", headers=JSON)
    assert answer.status_code == 400 and "limit must be a whole number" in answer.json()["error"]
    bad_type = web.get(f"/d/{world['name']}/recall?q=x&search_type=NOPE", headers=JSON)
    assert bad_type.status_code == 400 and "unknown search type" in bad_type.json()["error"]


def test_another_users_token_sees_no_trace_of_the_dataset(world):
    alice = _login(world, "tok-alice")
    name = world["name"]
    items = alice.get(f"/d/{name}", headers=JSON).json()["documents"]["items"]
    bob = _login(world, "tok-bob")
    assert bob.get("/", headers=JSON).json()["datasets"] == []
    assert name not in bob.get("/").text
    paths = [f"/d/{name}", f"/d/{name}/runs", f"/d/{name}/entities/Harbor Dynamics", f"/d/{name}/recall?q=CEO",
             f"/d/{name}/objects", f"/d/{name}/skills", f"/d/{name}/sessions",
             f"/d/{name}/items/{items[0]['id']}", f"/d/{name}/items/{world['decision']}"]
    for path in paths:
        for headers in ({}, JSON):
            answer = bob.get(path, headers=headers)
            assert answer.status_code in (403, 404), (path, answer.status_code)
            body = answer.text
            assert name not in body and "Harbor" not in body and "Lindqvist" not in body, (path, body[:500])
    # The same refusal as for a dataset that does not exist at all: nothing tells the two apart.
    missing = bob.get(f"/d/no-such-{uuid.uuid4().hex[:6]}/entities/Harbor Dynamics", headers=JSON)
    assert (missing.status_code, missing.json()) == (bob.get(paths[2], headers=JSON).status_code,
                                                     bob.get(paths[2], headers=JSON).json())
