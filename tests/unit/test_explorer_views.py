"""The explorer's pure parts: a run's stages on a timeline, facts by chunk, the graph as
vis-network reads it, chunk views, and the login's session and redirect rules."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from engram.cli.explorer import views
from engram.cli.explorer.auth import Authority, safe_next
from engram.pipelines.browse import chunk_views

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _at(seconds: float) -> str:
    return datetime.fromtimestamp(T0.timestamp() + seconds, UTC).isoformat()


def _stage(name, status, start, end, attempts=1, **kw):
    return {"stage": name, "status": status, "attempts": attempts, "started_at": None if start is None else _at(start),
            "finished_at": None if end is None else _at(end), "prompt_tokens": 3, "completion_tokens": 4, **kw}


def test_the_timeline_places_each_stage_on_its_runs_span_and_marks_a_retry():
    run = {"run_id": "r", "status": "completed", "attempts": 1, "created_at": _at(0), "finished_at": _at(10),
           "stages": [_stage("chunk", "completed", 0, 2), _stage("extract", "completed", 2, 10, attempts=2),
                      _stage("contradiction_check", "skipped", None, None, attempts=0)]}
    [shown] = views.timeline([run], now=datetime.fromisoformat(_at(60)))
    chunk, extract, skipped = shown["stages"]
    assert (chunk["left"], chunk["width"], chunk["seconds"]) == (0.0, 20.0, 2.0)
    assert (extract["left"], extract["width"], extract["resumed"], extract["tokens"]) == (20.0, 80.0, True, 7)
    assert skipped["seconds"] is None and shown["resumed"] and not shown["live"] and shown["seconds"] == 10.0


def test_a_running_stage_reaches_now_and_its_run_is_live():
    run = {"run_id": "r", "status": "running", "attempts": 1, "created_at": _at(0), "finished_at": None,
           "stages": [_stage("chunk", "completed", 0, 5), _stage("extract", "running", 5, None)]}
    [shown] = views.timeline([run], now=datetime.fromisoformat(_at(20)))
    assert shown["live"] and shown["stages"][1]["seconds"] == 15.0 and shown["stages"][1]["width"] == 75.0


def test_facts_go_under_every_chunk_they_come_from():
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    one = {"id": "f1", "sources": [{"data_item_id": "d", "chunk_ids": [a, b]}]}
    two = {"id": "f2", "sources": [{"data_item_id": "d", "chunk_ids": [b]}]}
    assert views.facts_by_chunk([one, two]) == {a: [one], b: [one, two]}


def test_the_graph_dashes_what_is_no_longer_current_and_reddens_a_contradiction():
    root, other = uuid.uuid4(), uuid.uuid4()
    graph = {"root": root, "nodes": [{"id": root, "name": "Acme", "type": "organization", "depth": 0},
                                     {"id": other, "name": "Alice", "type": None, "depth": 1}],
             "edges": [{"id": "e1", "source_id": other, "target_id": root, "predicate": "ceo_of",
                        "status": "superseded", "text": "Alice ceo of Acme"},
                       {"id": "e2", "source_id": other, "target_id": root, "predicate": "founded", "status": "current",
                        "text": "Alice founded Acme"}]}
    drawn = views.vis_graph(graph, views.contradicted({"contradictions": [
        {"between": ["e2", "e9"], "texts": ["Alice founded Acme", "Bob founded Acme"], "reason": "one founder"}]}))
    assert [(n["label"], n["value"], n["group"]) for n in drawn["nodes"]] == [("Acme", 3, "organization"),
                                                                              ("Alice", 2, "entity")]
    old, disputed = drawn["edges"]
    assert old["dashes"] and not old["contradicted"] and old["label"] == "ceo of"
    assert not disputed["dashes"] and disputed["contradicted"] and disputed["color"]["color"] == "#c0392b"


def test_chunk_views_list_each_chunks_entities_main_first():
    c1, c2, e1, e2 = (uuid.uuid4() for _ in range(4))
    chunks = [{"id": c1, "index": 0, "text": "x"}, {"id": c2, "index": 1, "text": "y"}]
    mentions = [{"chunk_id": c1, "id": e1, "name": "zed", "display_name": "Zed", "main": False},
                {"chunk_id": c1, "id": e2, "name": "acme", "display_name": "Acme", "main": True}]
    shown = chunk_views(chunks, mentions)
    assert [e["name"] for e in shown[0]["entities"]] == ["Acme", "Zed"] and shown[1]["entities"] == []


def test_a_login_goes_back_only_to_a_page_of_this_app():
    assert safe_next("/d/x/runs") == "/d/x/runs"
    for target in ("//evil.example/x", "https://evil.example", "/\\evil", "", None):
        assert safe_next(target) == "/"


def test_sessions_map_to_their_user_until_closed_and_tokens_must_match_exactly():
    authority = Authority({"s3cret": "alice"})
    assert authority.user_of_token("s3cret") == "alice"
    assert authority.user_of_token("s3cre") is None and authority.user_of_token("") is None
    sid = authority.open_session("alice")
    assert authority.user_of_session(sid) == "alice" and authority.user_of_session("forged") is None
    authority.close_session(sid)
    assert authority.user_of_session(sid) is None


class _Tasks:
    """A client whose engram.read answers one document quoting markup, whoever asks."""

    def __init__(self):
        self.calls = []

    def call(self, task, **payload):
        self.calls.append((task, payload))
        chunk = {"id": str(uuid.uuid4()), "index": 0, "text": "<script>alert(1)</script>", "token_count": 5,
                 "cut_type": "paragraph_end", "occurred_at": None, "speakers": None, "dates": None, "entities": []}
        return {"kind": "document", "id": payload["id"], "dataset": payload["dataset"], "title": "<b>t</b>",
                "text": "", "text_chars": 25, "created_at": None, "node_sets": [], "doc_type": "text",
                "object": None, "links": [], "facts": [], "chunks": [chunk], "chunks_total": 1,
                "next_chunk_offset": None}


def test_a_page_escapes_memory_text_and_asks_as_the_tokens_user():
    from starlette.testclient import TestClient

    from engram.cli.explorer import create_app

    tasks = _Tasks()
    web = TestClient(create_app(tasks, {"tok": "alice"}))
    path = f"/d/kb/items/{uuid.uuid4()}"
    assert web.get(path + "?chunk_offset=0", follow_redirects=False).headers["location"] == \
        f"/login?next={path}%3Fchunk_offset%3D0"
    page = web.get(path, headers={"Authorization": "Bearer tok"})
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert" not in page.text
    assert "&lt;b&gt;t&lt;/b&gt;" in page.text
    assert [(t, p["user"], p["dataset"]) for t, p in tasks.calls] == [("engram.read", "alice", "kb")]


def test_the_command_refuses_a_bad_token_map_in_one_line_before_any_service(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from engram.cli import app

    def no_services(*a, **k):
        raise AssertionError("the refusal reached for the services")

    monkeypatch.setattr("engram.cli.explorer.command.prepare_services", no_services)
    (tmp_path / "list.json").write_text('["not", "a", "map"]')
    (tmp_path / "empty.json").write_text("{}")
    for name in ("missing.json", "list.json", "empty.json"):
        result = CliRunner().invoke(app, ["explorer", "--tokens", str(tmp_path / name)])
        lines = result.output.strip().splitlines()
        assert result.exit_code == 1 and len(lines) == 1 and " — fix: " in lines[0], (name, result.output)
