"""Pure parts of the improve machinery: registry order and gates, run status, feedback
weights, debounce, admission (fail-open), the QA and triplet renderings."""

from __future__ import annotations

import uuid
from dataclasses import fields, replace
from datetime import datetime, timedelta, timezone

import pytest

from engram.pipelines.flow import Stage
from engram.pipelines.improve import registry
from engram.pipelines.improve.admission import admit
from engram.pipelines.improve.debounce import is_due
from engram.pipelines.improve.flow import POLICY
from engram.pipelines.improve.registry import BY_NAME, Budget, Decision, decide
from engram.pipelines.facts import fact_text
from engram.pipelines.improve.stages import feedback, qa


def _decide(name, **kw):
    args = dict(aborted_by=None, budget=Budget(), llm_calls=0, tokens=0, disabled=[], opt_in=[], session_ids=["s"])
    args.update(kw)
    return decide(BY_NAME[name], **args)


def test_registry_has_the_reference_order_and_one_fatal_stage():
    assert registry.stage_names() == [
        "feedback_weights", "persist_session_qa", "persist_agent_traces", "extract_agent_context",
        "distill_sessions", "update_user_preferences", "build_truth_subspace", "triplet_enrichment",
        "global_context_index"]
    assert [s.name for s in registry.STAGES if s.fatal] == ["persist_session_qa"]


def test_every_improve_stage_has_a_policy_and_a_stage_declares_none():
    assert list(POLICY) == registry.stage_names()
    assert not {"opt_in", "needs_sessions", "available"} & {f.name for f in fields(Stage)}
    assert [n for n, p in POLICY.items() if p.opt_in] == [
        "update_user_preferences", "build_truth_subspace", "triplet_enrichment", "global_context_index"]
    assert [n for n, p in POLICY.items() if not p.needs_sessions] == [
        "build_truth_subspace", "triplet_enrichment", "global_context_index"]


def test_gate_order_disabled_then_no_session_ids_then_not_available(monkeypatch):
    assert _decide("distill_sessions", disabled=["distill_sessions"], session_ids=[]) == Decision(
        "skipped", "disabled_by_config")
    assert _decide("distill_sessions", session_ids=[]) == Decision("skipped", "no_session_ids")
    with monkeypatch.context() as m:
        m.setitem(POLICY, "persist_agent_traces", replace(POLICY["persist_agent_traces"], available=False))
        assert _decide("persist_agent_traces").status == "not_available"
    assert _decide("persist_agent_traces") is None and _decide("extract_agent_context") is None  # built
    assert _decide("distill_sessions") is None  # built: its own gate decides next
    assert _decide("feedback_weights") is None  # its own gate decides next


def test_opt_in_stages_are_off_until_enabled_and_dataset_stages_need_no_sessions():
    assert _decide("triplet_enrichment") == Decision("skipped", "disabled_by_config")
    assert _decide("triplet_enrichment", opt_in=["triplet_enrichment"], session_ids=[]) is None
    assert _decide("build_truth_subspace", opt_in=["build_truth_subspace"], session_ids=[]) is None


def test_the_fatal_stage_cannot_be_disabled():
    assert _decide("persist_session_qa", disabled=["persist_session_qa"]) is None
    with pytest.raises(registry.UnknownStage, match="cannot be disabled"):
        registry.check_config(["persist_session_qa"], [])
    with pytest.raises(registry.UnknownStage, match="unknown improve stage"):
        registry.check_config([], ["no_such_stage"])


def test_a_fatal_failure_aborts_later_stages_but_a_non_fatal_one_does_not():
    aborted = _decide("triplet_enrichment", aborted_by="persist_session_qa", opt_in=["triplet_enrichment"])
    assert aborted == Decision("skipped", "aborted: fatal stage persist_session_qa failed")
    # After a non-fatal failure nothing is aborted: the next stage is decided on its own gates.
    assert _decide("triplet_enrichment", opt_in=["triplet_enrichment"]) is None


def test_budget_exhausted_skips_with_that_reason_before_any_gate():
    budget = Budget(max_llm_calls=2)
    assert _decide("feedback_weights", budget=budget, llm_calls=1) is None
    assert _decide("feedback_weights", budget=budget, llm_calls=2) == Decision("skipped", "budget_exhausted")
    assert _decide("feedback_weights", budget=Budget(max_tokens=100), tokens=150).reason == "budget_exhausted"
    assert not Budget().exhausted(10**9, 10**9)  # 0 = unlimited


@pytest.mark.parametrize("stages,expected", [
    ([{"status": "completed", "fatal": False}], "completed"),
    ([{"status": "failed", "fatal": False}, {"status": "completed", "fatal": False}], "completed_with_errors"),
    ([{"status": "failed", "fatal": True}, {"status": "skipped", "fatal": False}], "aborted"),
    ([{"status": "completed", "fatal": True}, {"status": "skipped", "fatal": False, "reason": "budget_exhausted"}],
     "budget_exhausted"),
    ([{"status": "fenced_out", "fatal": True}], "lost"),
])
def test_run_status_from_stage_rows(stages, expected):
    assert registry.status_from_stages(stages) == expected


def test_feedback_moves_weights_by_alpha_toward_one_or_zero():
    assert feedback.move(0.5, 1, 0, 0.1) == pytest.approx(0.55)
    assert feedback.move(0.5, 0, 1, 0.1) == pytest.approx(0.45)
    assert feedback.move(0.5, 2, 0, 0.1) == pytest.approx(1 - 0.5 * 0.81)
    assert feedback.move(1.0, 5, 0, 0.1) == 1.0 and feedback.move(0.0, 0, 5, 0.1) == 0.0


def test_only_unapplied_verdicts_move_weights_and_unknown_sources_are_ignored():
    chunk, other, gone = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    entries = [
        {"seq": 2, "helpful_count": 3, "feedback_applied_helpful": 1, "harmful_count": 0,
         "feedback_applied_harmful": 0, "source_chunk_ids": [chunk, gone], "id": "b"},
        {"seq": 1, "helpful_count": 0, "feedback_applied_helpful": 0, "harmful_count": 1,
         "feedback_applied_harmful": 0, "source_chunk_ids": [chunk], "id": "a"},
        {"seq": 3, "helpful_count": 1, "feedback_applied_helpful": 1, "harmful_count": 0,
         "feedback_applied_harmful": 0, "source_chunk_ids": [other], "id": "c"},
    ]
    got = feedback.new_weights(entries, {chunk: 0.5, other: 0.5}, "source_chunk_ids", 0.1)
    assert got == {chunk: pytest.approx(feedback.move(feedback.move(0.5, 0, 1, 0.1), 2, 0, 0.1))}
    assert feedback.pending_verdicts(entries) == {"b": (2, 0), "a": (0, 1)}


def test_debounce_first_run_always_then_n_entries_or_t_seconds():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert is_due(0, None, now, 10, 60)
    assert not is_due(9, now - timedelta(seconds=59), now, 10, 60)
    assert is_due(10, now - timedelta(seconds=1), now, 10, 60)
    assert is_due(1, now - timedelta(seconds=60), now, 10, 60)


def test_admission_is_fail_open():
    assert admit(None, {}) is None
    assert admit(lambda r: "insufficient_credits", {}) == "insufficient_credits"
    assert admit(lambda r: None, {}) is None

    def boom(_):
        raise RuntimeError("host down")

    assert admit(boom, {}) is None
    for garbage in (42, "", "   ", ["no"], True):
        assert admit(lambda r, g=garbage: g, {}) is None


def test_qa_and_triplet_renderings():
    text = qa.render_qa("s1", {"question": " Who? ", "answer": "Alice", "context": "", "seq": 4})
    assert text == "# Session QA (session s1)\n\nQuestion: Who?\n\nAnswer: Alice\n"
    assert qa.item_name("s1", {"seq": 4}) == "session-s1-4.md"
    assert fact_text("Alice Moreau", "ceo_of", "Harbor Dynamics") == "Alice Moreau ceo of Harbor Dynamics"


def test_every_process_refuses_improve_settings_naming_an_unknown_or_fatal_stage():
    from engram.celery_app import check_config
    from engram.settings import Settings

    check_config(Settings(improve_opt_in_stages="triplet_enrichment", improve_disabled_stages="feedback_weights"))
    with pytest.raises(ValueError, match="unknown improve stage 'no_such_stage'"):
        check_config(Settings(improve_opt_in_stages="no_such_stage"))
    with pytest.raises(ValueError, match="cannot be disabled"):
        check_config(Settings(improve_disabled_stages=" persist_session_qa "))


def test_doctor_names_a_misnamed_stage_with_its_fix():
    from engram.cli.doctor import _config_check
    from engram.settings import Settings

    bad = _config_check(Settings(improve_opt_in_stages="no_such_stage"))
    assert not bad.ok and "unknown improve stage 'no_such_stage'" in bad.detail and bad.fix
    assert _config_check(Settings()).ok
