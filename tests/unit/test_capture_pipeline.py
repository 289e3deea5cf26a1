"""The capture lane's pure stages (SPEC 9): templates, entities, normalize, link, enrich, reason."""

import json
import uuid

import pytest

from engram.adapters.llm.gateway import LLMGateway
from engram.adapters.llm.providers import OfflineProvider, ReplayProvider
from engram.pipelines.capture.admit import draft_object
from engram.pipelines.capture.enrich import enrich
from engram.pipelines.capture.link import choose_entities, link
from engram.pipelines.capture.normalize import normalize
from engram.pipelines.capture.reason import reason
from engram.pipelines.capture.vocabulary import (
    CaptureInputError,
    canonical_predicate,
    edge_relationship,
    type_entities,
)

OFFLINE = LLMGateway(OfflineProvider())


def replay(tmp_path, entries):
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    return LLMGateway(ReplayProvider(path), max_reasks=0)


def draft(**kw):
    base = dict(title="t", content="body", type=None, project=None, tags=[], template=None, template_fields=None,
                summary=None, entities=None, properties=None)
    return draft_object(**{**base, **kw})


# ------------------------------------------------------------------ templates and vocabulary


def test_template_renders_sections_sets_type_and_its_properties_win():
    d = draft(type="idea", content="", template="decision",
              template_fields={"chosen": "Postgres", "rationale": "one store", "decision_status": "accepted"},
              properties={"chosen": "MySQL", "owner": "ops"})
    assert d.type == "decision" and d.type_given
    assert d.content == "## Chosen\nPostgres\n\n## Rationale\none store\n\n## Decision Status\naccepted"
    assert d.properties == {"chosen": "Postgres", "owner": "ops", "rationale": "one store", "decisionStatus": "accepted"}
    assert d.request()["properties"] == {"chosen": "MySQL", "owner": "ops"}  # the caller's own, for reprocess


@pytest.mark.parametrize("template,field", [("session", "goal"), ("fix", "symptom"), ("decision", "chosen"),
                                            ("lesson", "cause"), ("research", "question")])
def test_required_template_fields_are_enforced(template, field):
    with pytest.raises(CaptureInputError, match=f"template '{template}' requires {field}"):
        draft(template=template, template_fields={})


def test_idea_template_has_no_required_field_and_unknown_fields_are_errors():
    assert draft(template="idea", template_fields={"feasibility": "high"}).type == "idea"
    with pytest.raises(CaptureInputError, match="has no field"):
        draft(template="idea", template_fields={"colour": "red"})
    with pytest.raises(CaptureInputError, match="unknown template"):
        draft(template="memo")


def test_malformed_entity_and_property_json_is_an_error_not_dropped():
    with pytest.raises(CaptureInputError, match="entities is not valid JSON"):
        draft(entities='[{"name": "Redis"')
    with pytest.raises(CaptureInputError, match="properties is not valid JSON"):
        draft(properties="{oops}")
    with pytest.raises(CaptureInputError, match="properties must be a JSON dict"):
        draft(properties="[1]")
    with pytest.raises(CaptureInputError, match=r"entities\[1\]"):
        draft(entities=[{"name": "Redis"}, {"type": "technology"}])
    assert draft(entities='[{"name": "Redis", "type": "Technology"}]').entities == [
        {"name": "Redis", "type": "technology"}]


def test_entity_typing():
    typed = type_entities([{"name": "Redis", "type": "TECHNOLOGY"}, {"name": "redis", "type": "project"},
                           {"name": "Saga", "type": "pattern"}, {"name": "Quux", "type": "gadget"},
                           {"name": "Bug"}, {"name": "  "}, "Engram"])
    assert [(e.name, e.type) for e in typed] == [("Redis", "technology"), ("Saga", "pattern"), ("Quux", "concept"),
                                                 ("Engram", "concept")]


def test_predicates():
    assert edge_relationship("causedBy") == "caused_by" and edge_relationship("ledTo") == "led_to"
    assert canonical_predicate("caused_by") == "causedBy" and canonical_predicate("DEPENDSON") == "dependsOn"
    assert canonical_predicate("relatedTo") is None


# ------------------------------------------------------------------ normalize


def obj(**kw):
    return {"title": "Use Postgres", "content": "We chose Postgres for everything.", "type": "idea",
            "tags": [], "project": "", "properties": {}, **kw}


def test_supplied_summary_skips_the_model():
    # A replay gateway with no entries would raise on any call.
    out = normalize(obj(type="decision"), {"summary": "Postgres it is", "type_given": True}, replay_empty())
    assert (out["summary"], out["confidence"], out["type"], out["llm"]) == ("Postgres it is", 0.9, "decision", False)


def replay_empty(tmp_path_factory=None):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "c.json"
    path.write_text(json.dumps({"version": 1, "entries": []}))
    return LLMGateway(ReplayProvider(path), max_reasks=0)


def test_offline_normalize_is_idea_with_title_summary_and_zero_confidence():
    out = normalize(obj(), {"summary": None, "type_given": False}, OFFLINE)
    assert (out["type"], out["summary"], out["confidence"]) == ("idea", "Use Postgres", 0.0)
    kept = normalize(obj(type="decision"), {"type_given": True}, OFFLINE)
    assert (kept["type"], kept["classified_type"]) == ("decision", "idea")


def test_model_classification_and_invalid_type(tmp_path):
    gw = replay(tmp_path, [
        {"contains": "We chose Postgres", "response_model": "CaptureClassification", "response": {
            "type": "Decision", "summary": "Postgres everywhere.", "tags": "db, storage", "project": "engram",
            "entities": [{"name": "PostgreSQL", "type": "technology"}, {"name": "code"}, 7], "confidence": 0.8,
            "properties": {"chosen": "Postgres"}}},
        {"contains": "Maybe sharks", "response_model": "CaptureClassification", "response": {
            "type": "memo", "summary": "s", "confidence": 0.9}},
    ])
    out = normalize(obj(project="", tags=["mine"]), {"type_given": False}, gw)
    assert (out["type"], out["confidence"], out["project"], out["tags"]) == ("decision", 0.8, "engram", ["mine"])
    assert out["entities"] == [{"name": "PostgreSQL", "type": "technology"}]
    assert out["properties"] == {"chosen": "Postgres"}
    bad = normalize(obj(content="Maybe sharks"), {"type_given": False}, gw)
    assert bad["type"] == "idea" and bad["confidence"] <= 0.3


def test_classifier_sees_title_and_first_8000_chars(tmp_path):
    body = "a" * 8000 + "TAIL"
    gw = replay(tmp_path, [{"contains": "TAIL", "response_model": "*", "response": {"type": "fix"}},
                           {"contains": "a" * 8000, "response_model": "*", "response": {"type": "lesson"}}])
    assert normalize(obj(content=body), {}, gw)["classified_type"] == "lesson"


# ------------------------------------------------------------------ link

DS = uuid.uuid4()


def new_obj(content="The new decision"):
    return {"id": uuid.uuid4(), "dataset_id": DS, "title": "New", "type": "decision", "content": content}


def test_caller_entities_take_precedence_even_empty():
    assert choose_entities([], [{"name": "Redis"}]) == []
    assert [e.name for e in choose_entities(None, [{"name": "Redis"}])] == ["Redis"]


def test_entities_become_mentions_edges_offline():
    new = new_obj()
    out = link(new, choose_entities([{"name": "Redis", "type": "technology"}], None), [], OFFLINE)
    assert [(e["relationship"], e["target_id"]) for e in out["edges"]] == [("mentions", out["nodes"][0]["id"])]
    assert out["edges"][0]["edge_text"] == "New mentions Redis"


def test_link_keeps_only_valid_proposals(tmp_path):
    new = new_obj()
    cands = [{"id": uuid.uuid4(), "type": "fix", "title": f"Old {i}"} for i in range(25)]
    a, b, hidden = cands[0]["id"], cands[1]["id"], cands[22]["id"]
    proposals = [
        {"from_id": str(new["id"]), "to_id": str(a), "rel_type": "supersedes", "confidence": 0.9},
        {"from_id": str(b), "to_id": str(new["id"]), "rel_type": "caused_by", "confidence": 0.7},
        {"from_id": str(new["id"]), "to_id": str(a), "rel_type": "relatedTo", "confidence": 0.9},
        {"from_id": str(new["id"]), "to_id": str(b), "rel_type": "supports", "confidence": 0.5},
        {"from_id": str(new["id"]), "to_id": str(new["id"]), "rel_type": "supports", "confidence": 0.9},
        {"from_id": str(a), "to_id": str(b), "rel_type": "supports", "confidence": 0.9},
        {"from_id": str(new["id"]), "to_id": "", "rel_type": "supports", "confidence": 0.9},
        {"from_id": str(new["id"]), "to_id": str(hidden), "rel_type": "supports", "confidence": 0.9},
    ]
    gw = replay(tmp_path, [{"contains": "The new decision", "response_model": "LinkProposals",
                            "response": {"relationships": proposals}}])
    out = link(new, [], cands, gw)
    assert out["candidates"] == 20
    assert [(e["source_id"], e["target_id"], e["relationship"]) for e in out["edges"]] == [
        (new["id"], a, "supersedes"), (b, new["id"], "caused_by")]
    assert [r["reason"] for r in out["rejected"]] == [
        "unknown predicate 'relatedTo'", "confidence 0.5 not above 0.5", "self-link",
        "edge does not touch the new object", "missing endpoint", f"endpoint {hidden} is not a listed object"]


def test_linker_sees_first_4000_body_chars(tmp_path):
    new = new_obj(content="b" * 4000 + "TAIL")
    gw = replay(tmp_path, [{"contains": "TAIL", "response_model": "*", "error": "server_error"},
                           {"contains": "b" * 4000, "response_model": "*", "response": {"relationships": []}}])
    assert link(new, [], [{"id": uuid.uuid4(), "type": "fix", "title": "x"}], gw)["edges"] == []


# ------------------------------------------------------------------ enrich


def test_tiers_and_staleness():
    me, dep, other = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    edges = [{"source_id": me, "target_id": dep, "relationship": "depends_on"},
             {"source_id": me, "target_id": other, "relationship": "depends_on"}]
    assert enrich({"id": me, "tier": "reflex", "summary": "", "confidence": 0}, edges, set())["tier"] == "reflex"
    assert enrich({"id": me, "tier": "archive", "summary": "s", "confidence": 0.1}, [], set())["tier"] == "recall"
    assert enrich({"id": me, "tier": None, "summary": "s", "confidence": 0.0}, [], set())["tier"] == "archive"
    out = enrich({"id": me, "tier": None, "summary": "s", "confidence": 0.9}, edges, {dep})
    assert (out["connection_count"], out["staleness"]) == (2, 0.5)


# ------------------------------------------------------------------ reason


def nodes(n):
    return [uuid.UUID(int=i + 1) for i in range(n)]


def test_contradicts_is_symmetric_with_provenance():
    a, b = nodes(2)
    out = reason([(a, b, "contradicts")])
    assert [(i.source, i.target, i.relationship, i.rule) for i in out.inferred] == [
        (b, a, "contradicts", "symmetric_contradicts")]
    assert out.inferred[0].premises == ((a, b, "contradicts"),)


def test_caused_by_and_led_to_are_inverses():
    a, b, c, d = nodes(4)
    out = reason([(a, b, "caused_by"), (c, d, "led_to")])
    assert {(i.source, i.target, i.relationship) for i in out.inferred} == {(b, a, "led_to"), (d, c, "caused_by")}
    assert out.rule_counts["inverse_caused_by_led_to"] == 1 and out.rule_counts["inverse_led_to_caused_by"] == 1


def test_ten_deep_supersedes_chain_closes():
    chain = nodes(11)
    edges = [(chain[i], chain[i + 1], "supersedes") for i in range(10)]
    out = reason(edges)
    got = {(i.source, i.target) for i in out.inferred} | {(s, t) for s, t, _ in edges}
    assert got == {(chain[i], chain[j]) for i in range(11) for j in range(i + 1, 11)}
    assert out.fixpoint and out.iterations <= 10
    first_to_last = next(i for i in out.inferred if (i.source, i.target) == (chain[0], chain[10]))
    assert first_to_last.rule == "transitive_supersedes" and len(first_to_last.premises) == 2


def test_cycle_terminates_without_self_edges():
    a, b, c = nodes(3)
    out = reason([(a, b, "supersedes"), (b, c, "supersedes"), (c, a, "supersedes")])
    assert out.fixpoint
    closed = {(i.source, i.target) for i in out.inferred}
    assert closed == {(a, c), (b, a), (c, b)}
    assert all(i.source != i.target for i in out.inferred)


def test_reason_is_idempotent():
    chain = nodes(5)
    edges = [(chain[i], chain[i + 1], "supersedes") for i in range(4)] + [(chain[0], chain[4], "contradicts")]
    first = reason(edges)
    everything = edges + [(i.source, i.target, i.relationship) for i in first.inferred]
    again = reason(everything)
    assert first.inferred and again.inferred == [] and again.iterations == 1


def test_iteration_bound_is_reported():
    chain = nodes(40)
    out = reason([(chain[i], chain[i + 1], "supersedes") for i in range(39)], max_iterations=2)
    assert out.iterations == 2 and not out.fixpoint


def test_a_capture_run_reads_partial_complete_or_failed_from_its_run():
    from engram.models.payloads import CaptureStatus, RunStatus
    from engram.pipelines.flows import BY_NAME

    assert BY_NAME["capture"].partial and not BY_NAME["cognify"].partial and not BY_NAME["maintenance"].partial
    oid = uuid.uuid4()

    def read(status: str) -> str:
        return CaptureStatus.of(oid, RunStatus(run_id=uuid.uuid4(), pipeline="capture", status=status)).status

    assert RunStatus(run_id=oid, pipeline="capture", status="partial").done
    assert [read(s) for s in ("pending", "running", "partial", "completed", "failed", "forgotten")] == [
        "pending", "pending", "partial", "complete", "failed", "forgotten"]
    assert CaptureStatus.of(oid, None).status == "ingested"
