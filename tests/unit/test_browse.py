"""Browsing memory, pure: fact status, the dossier's split, the capped walk, pages, links."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from engram.models.payloads import LinkRequest, ListRequest
from engram.pipelines import browse, ids
from engram.pipelines.errors import BadInput

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _edge(source, target, rel="works_at", **kw):
    return {"id": uuid.uuid4(), "source_id": source, "target_id": target, "relationship": rel, "properties": {},
            "edge_text": f"{source} {rel} {target}", "provenance": [], **kw}


def test_a_fact_is_current_superseded_or_ended():
    a, b = uuid.uuid4(), uuid.uuid4()
    assert browse.fact_status(_edge(a, b), NOW) == "current"
    assert browse.fact_status(_edge(a, b, superseded=True), NOW) == "superseded"
    assert browse.fact_status(_edge(a, b, valid_to=datetime(2020, 1, 1, tzinfo=UTC)), NOW) == "ended"
    assert browse.fact_status(_edge(a, b, valid_to=datetime(2030, 1, 1, tzinfo=UTC)), NOW) == "current"


def test_the_dossier_splits_facts_and_gathers_their_sources():
    me, acme, globex = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    c1, c2, d1 = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    now_job = _edge(me, globex, provenance=[c2], properties={"origin": "caller"})
    old_job = _edge(me, acme, superseded=True, provenance=[c1, c2])
    sources = {c1: {"data_item_id": d1, "title": "cv"}, c2: {"data_item_id": d1, "title": "cv"}}
    out = browse.dossier({"id": me, "name": "Ann"}, [now_job, old_job], limit=5, sources=sources,
                         intervals={old_job["id"]: [{"starts_at": NOW, "ends_at": None}]}, contradictions=[],
                         texts={}, now=NOW)
    assert [f["id"] for f in out["current"]] == [now_job["id"]] and out["current"][0]["origin"] == "caller"
    assert [f["status"] for f in out["superseded"]] == ["superseded"]
    assert out["superseded"][0]["intervals"][0]["starts_at"] == NOW
    assert out["sources"] == [{"data_item_id": d1, "title": "cv", "chunk_ids": [c2, c1]}]
    assert not out["truncated"]
    assert browse.dossier({"id": me, "name": "Ann"}, [now_job, old_job], limit=1, sources={}, intervals={},
                          contradictions=[], texts={}, now=NOW)["truncated"]


def test_the_walk_goes_two_deep_and_stops_at_the_cap():
    root, a, b, c = (uuid.uuid4() for _ in range(4))
    graph = [_edge(root, a), _edge(b, root), _edge(a, c), _edge(c, uuid.uuid4())]

    def edges_of(nodes, k):
        return [e for e in graph if e["source_id"] in nodes or e["target_id"] in nodes][:k]

    depths, edges, truncated = browse.neighbourhood(root, edges_of, depth=2, limit=10)
    assert depths == {root: 0, a: 1, b: 1, c: 2} and len(edges) == 3 and not truncated
    depths, edges, truncated = browse.neighbourhood(root, edges_of, depth=1, limit=10)
    assert set(depths) == {root, a, b} and not truncated
    depths, edges, truncated = browse.neighbourhood(root, edges_of, depth=2, limit=2)
    assert len(edges) == 2 and truncated and c not in depths


def test_pages_of_text_and_lists():
    assert browse.text_page("abcdef", 0, 4) == ("abcd", 4)
    assert browse.text_page("abcdef", 4, 4) == ("ef", None)
    with pytest.raises(BadInput, match="past the end"):
        browse.text_page("abc", 4, 1)
    assert browse.next_offset(0, 20, 45) == 20 and browse.next_offset(40, 5, 45) is None


def test_a_caller_link_is_a_capture_edge_with_origin_caller():
    dataset = uuid.uuid4()
    a = {"id": uuid.uuid4(), "name": "Queue choice"}
    b = {"id": uuid.uuid4(), "name": "Redis"}
    row = browse.link_row(dataset, a, b, "dependsOn", user="ann", confidence=0.9, note="", provenance=[])
    assert row["id"] == ids.edge_id(dataset, a["id"], b["id"], "depends_on")
    assert row["properties"] == {"predicate": "dependsOn", "origin": "caller", "confidence": 0.9, "linked_by": "ann"}
    assert row["edge_text"] == "Queue choice depends on Redis"
    with pytest.raises(BadInput, match="two different ends"):
        browse.link_row(dataset, a, a, "supports", user="ann", confidence=1.0, note="", provenance=[])


def test_entity_refs_and_request_checks():
    some = uuid.uuid4()
    assert browse.entity_ref(str(some)) == (some, "")
    assert browse.entity_ref("  Redis ")[0] is None
    with pytest.raises(ValueError, match="unknown predicate 'likes'"):
        LinkRequest(dataset="d", source="a", target="b", predicate="likes")
    assert LinkRequest(dataset="d", source="a", target="b", predicate="CAUSED_BY").predicate == "causedBy"
    with pytest.raises(ValueError, match="unknown object type 'memo'"):
        ListRequest(dataset="d", type="memo")
    with pytest.raises(ValueError, match="unknown document type 'memo'"):
        ListRequest(dataset="d", kind="documents", type="memo")
    assert ListRequest(dataset="d", kind="documents", type="Conversation").type == "conversation"
    with pytest.raises(ValueError, match="project filters captured objects"):
        ListRequest(dataset="d", kind="documents", project="p")
