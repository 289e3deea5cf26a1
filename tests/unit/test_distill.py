"""Session distillation over an in-memory store, answered by the real gateway + replay cassette."""

from __future__ import annotations

import json
import uuid

import pytest

from engram.adapters.llm.gateway import LLMGateway
from engram.adapters.llm.providers import ReplayProvider
from engram.pipelines.improve import distill as d
from engram.pipelines.improve import distill_run as dr
from engram.prompts.distillation import ProposedLesson, ProposedLessonList, WrittenLesson

DATASET = uuid.UUID("00000000-0000-0000-0000-00000000000d")


def entry(seq, question, answer="", harmful=0, confidence=1.0, helpful=0):
    return {"id": uuid.uuid5(DATASET, f"e{seq}"), "seq": seq, "question": question, "answer": answer,
            "harmful_count": harmful, "helpful_count": helpful, "confidence": confidence}


class FakeStore:
    """Lessons, decisions and the watermark in dicts (the DistillPorts interface)."""

    def __init__(self):
        self.lessons: dict[uuid.UUID, dict] = {}
        self.decisions: list[dict] = []
        self.watermark = 0
        self.documents: list[tuple[str, list[str]]] = []

    def similar_lessons(self, dataset_id, text, limit):
        return [v["statement"] for v in self.lessons.values()][:limit]

    def glossary(self, dataset_id, text, limit):
        return ["Harbor Dynamics", "Alice Moreau"][:limit]

    def publish(self, dataset_id, publications, decisions, session_id):
        self.decisions += [dict(x.as_dict(), reason=x.reason) for x in decisions if not x.accepted]
        new = 0
        for p in publications:
            if p.lesson_id not in self.lessons:
                self.lessons[p.lesson_id] = {"statement": p.statement, "members": p.member_entry_ids}
                self.documents.append((p.text, d.node_sets(session_id)))
                new += 1
        return new

    def advance(self, dataset_id, session_id, seq):
        self.watermark = max(self.watermark, seq)


def gateway(tmp_path, entries):
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    return LLMGateway(ReplayProvider(path), max_reasks=0)


def run(store, gw, window, session="s1"):
    return dr.distill(store, gw.structured, DATASET, session, window, store.watermark)


PROPOSAL = {"lessons": [{"working_statement": "Deploys to prod need the ops sign-off",
                         "member_entry_ids": []}]}
ACCEPT = {"accept": True, "statement": "Production deploys need the ops team's sign-off.",
          "entities": ["ops team"], "why_learned": "the user confirmed it twice"}


def test_gate_keeps_unharmed_confident_entries_above_the_watermark():
    window = [entry(1, "a"), entry(2, "b", harmful=1), entry(3, "c", confidence=0.74), entry(4, "d", confidence=0.75)]
    assert [e["seq"] for e in d.gate(window, 0)] == [1, 4]
    assert [e["seq"] for e in d.gate(window, 1)] == [4]


def test_batches_hold_six_blocks_within_the_budget_and_cut_long_text():
    short = [entry(i, f"question {i}", f"answer {i}") for i in range(1, 14)]
    assert [len(b.entry_ids) for b in d.batches(short)] == [6, 6, 1]
    window = [entry(i, "q" * 5000, "a" * 5000) for i in range(1, 14)]
    out = d.batches(window)  # ~2,800 chars a block: the 16,000-char budget binds before 6 blocks
    assert [len(b.entry_ids) for b in out] == [5, 5, 3]
    assert all(len(b.timeline) <= d.BATCH_CHARS for b in out)
    first = out[0].timeline.split("\n\n")[0]
    user, assistant, candidate = first.split("\n")
    assert len(user) == len("User: ") + d.QA_CUT and len(assistant) == len("Assistant: ") + d.QA_CUT
    assert len(candidate.split("): ", 1)[1]) == d.CANDIDATE_CUT
    # A tighter budget closes batches earlier.
    assert [len(b.entry_ids) for b in d.batches(window, budget=6000)] == [2] * 6 + [1]
    assert [b.entry_ids for b in d.batches(short)][0] == tuple(str(e["id"]) for e in short[:6])


def test_render_and_node_sets_of_a_publication():
    assert d.render_lesson("s9", "  Use the staging key. ", "user said so.") == \
        "# Session learning (session s9)\n\nUse the staging key. (user said so.)\n"
    assert d.render_lesson("s9", "X", "") == "# Session learning (session s9)\n\nX\n"
    assert d.node_sets("s9") == ["session_learnings", "session_learnings:s9"]
    assert d.lesson_id(DATASET, "Use  the staging key.") == d.lesson_id(DATASET, "use the staging key")


def test_no_gated_entries(tmp_path):
    store = FakeStore()
    result = run(store, gateway(tmp_path, []), [entry(1, "q", harmful=2)])
    assert result.outcome == d.NO_GATED and store.watermark == 0


def test_no_proposed_lessons_advances_the_watermark(tmp_path):
    store = FakeStore()
    gw = gateway(tmp_path, [{"contains": "Session slice", "response_model": "ProposedLessonList",
                             "response": {"lessons": []}}])
    result = run(store, gw, [entry(1, "hello"), entry(2, "thanks")])
    assert result.outcome == d.NO_PROPOSED and store.watermark == 2 and not store.lessons


def test_rejected_decisions_are_kept_with_their_reason(tmp_path):
    store = FakeStore()
    gw = gateway(tmp_path, [
        {"contains": "Session slice", "response_model": "ProposedLessonList", "response": PROPOSAL},
        {"contains": "PROPOSED LESSON", "response_model": "WrittenLesson",
         "response": {"accept": False, "reason": "not_durable"}},
    ])
    result = run(store, gw, [entry(1, "deploy?", "needs ops sign-off")])
    assert result.outcome == d.NO_ACCEPTED and store.watermark == 1
    assert [x["reason"] for x in store.decisions] == ["not_durable"] and result.counts["rejected"] == {"not_durable": 1}


def test_accepted_lesson_is_published_once_with_members(tmp_path):
    window = [entry(1, "How do we deploy?", "Ask ops first."), entry(2, "Really?", "Yes, ops must sign off.")]
    ids = [str(e["id"]) for e in window]
    proposal = {"lessons": [{"working_statement": "Deploys need ops sign-off", "member_entry_ids": [*ids, "bogus"]},
                            {"working_statement": "deploys  need ops sign-off.", "member_entry_ids": ids[:1]}]}
    store = FakeStore()
    gw = gateway(tmp_path, [
        {"contains": "Session slice", "response_model": "ProposedLessonList", "response": proposal},
        {"contains": "PROPOSED LESSON", "response_model": "WrittenLesson", "response": ACCEPT},
    ])
    result = run(store, gw, window)
    assert result.outcome == d.COMPLETED and result.counts["proposals"] == 1 and store.watermark == 2
    (lesson,) = store.lessons.values()
    assert lesson["members"] == ids  # duplicates merged, the unknown id dropped
    text, sets = store.documents[0]
    assert text == ("# Session learning (session s1)\n\nProduction deploys need the ops team's sign-off."
                    " (the user confirmed it twice.)\n")
    assert sets == ["session_learnings", "session_learnings:s1"]


def test_writer_sees_members_similar_lessons_and_glossary(tmp_path):
    store = FakeStore()
    store.lessons[uuid.uuid4()] = {"statement": "Staging uses the blue cluster.", "members": []}
    window = [entry(1, "Where is staging?", "On blue.")]
    gw = gateway(tmp_path, [
        {"contains": "Session slice", "response_model": "ProposedLessonList",
         "response": {"lessons": [{"working_statement": "Staging runs on blue",
                                   "member_entry_ids": [str(window[0]["id"])]}]}},
        {"contains": "- Staging uses the blue cluster.", "response_model": "WrittenLesson",
         "response": {"accept": False, "reason": "already_known"}},
    ])
    result = run(store, gw, window)
    assert result.counts["rejected"] == {"already_known": 1}
    messages = d.writer_messages(ProposedLesson(working_statement="x", member_entry_ids=[str(window[0]["id"])]),
                                 {str(window[0]["id"]): window[0]}, ["a"] * 9, [f"n{i}" for i in range(30)])
    user = messages[-1]["content"]
    assert "User: Where is staging? | Assistant: On blue." in user
    assert user.count("\n- a") == d.SIMILAR_LESSONS and "n19" in user and "n20" not in user


def test_a_failing_writer_keeps_the_watermark_and_a_retry_publishes_once(tmp_path):
    window = [entry(1, "deploy?", "ops sign-off"), entry(2, "and tests?", "run them on CI")]
    two = {"lessons": [{"working_statement": "Deploys need ops sign-off", "member_entry_ids": []},
                       {"working_statement": "Tests run on CI", "member_entry_ids": []}]}
    store = FakeStore()
    failing = [
        {"contains": "Session slice", "response_model": "ProposedLessonList", "response": two},
        {"contains": "Tests run on CI", "response_model": "WrittenLesson", "error": "timeout"},
        {"contains": "PROPOSED LESSON", "response_model": "WrittenLesson", "response": ACCEPT},
    ]
    result = run(store, gateway(tmp_path, failing), window)
    assert result.outcome == d.CALLS_FAILED and store.watermark == 0
    assert result.counts["writer_failures"] == 1 and len(store.lessons) == 1  # the survivor is published
    fixed = [failing[0], {"contains": "Tests run on CI", "response_model": "WrittenLesson",
                          "response": dict(ACCEPT, statement="Tests run on CI before merge.")}, failing[2]]
    result = run(store, gateway(tmp_path, fixed), window)
    assert result.outcome == d.COMPLETED and store.watermark == 2
    assert len(store.lessons) == 2 and len(store.documents) == 2  # nothing published twice


def test_a_failing_curator_batch_keeps_the_watermark(tmp_path):
    store = FakeStore()
    gw = gateway(tmp_path, [{"contains": "Session slice", "response_model": "*", "error": "server_error"}])
    result = run(store, gw, [entry(1, "q")])
    assert result.outcome == d.CALLS_FAILED and result.counts["curator_failures"] == 1 and store.watermark == 0


def test_admission_needs_accept_and_a_statement():
    p = ProposedLesson(working_statement="x")
    assert not d.Decision(p, WrittenLesson(accept=True, statement="  ")).accepted
    assert not d.Decision(p, None, "boom").accepted and d.Decision(p, None).reason == "call_failed"
    assert d.Decision(p, WrittenLesson(accept=True, statement="ok")).accepted
    assert d.Decision(p, WrittenLesson(accept=False)).reason == "not_durable"
    again = d.Decision.from_dict(d.Decision(p, WrittenLesson(accept=False, reason="unsupported")).as_dict())
    assert again.reason == "unsupported"


@pytest.mark.parametrize("bad", [{"lessons": [{"working_statement": ""}]}, {"lessons": "x"}])
def test_curator_answer_model_rejects_malformed_output(bad):
    with pytest.raises(ValueError):
        ProposedLessonList.model_validate(bad)


def test_lanes_deal_round_robin_to_at_most_five():
    assert dr.lanes(list(range(12))) == [[0, 5, 10], [1, 6, 11], [2, 7], [3, 8], [4, 9]]
    assert dr.lanes([1, 2]) == [[1], [2]] and dr.lanes([]) == []


def test_max_in_flight_counts_overlapping_calls():
    assert dr.max_in_flight([[0, 1], [0.5, 2], [1, 3], [2.5, 4]]) == 2
    assert dr.max_in_flight([[0, 10]] + [[i, i + 0.5] for i in range(5)]) == 2
    assert dr.max_in_flight([]) == 0


def test_writer_inputs_resolve_members_and_look_up_by_vector():
    window = [entry(1, "q1", "a1"), entry(2, "q2")]
    items = [{"session_id": "s", "proposal": {"working_statement": "w", "member_entry_ids": [str(window[1]["id"])]}}]
    seen = []
    out = dr.writer_inputs(items, lambda texts: [[1.0] for _ in texts], lambda v, k: seen.append(k) or ["old"],
                           lambda v, k: seen.append(k) or ["Alice"], lambda ids: [e for e in window if str(e["id"]) in ids])
    assert out[0]["members"] == [{"id": str(window[1]["id"]), "seq": 2, "question": "q2", "answer": ""}]
    assert (out[0]["similar"], out[0]["glossary"], seen) == (["old"], ["Alice"], [d.SIMILAR_LESSONS, d.GLOSSARY_NAMES])
