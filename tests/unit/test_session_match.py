from dataclasses import dataclass

from engram.pipelines.recall.session import match_session_entries, tokens


@dataclass
class Entry:
    question: str
    answer: str
    context: str | None = None
    created_at: str | None = None


def test_tokens_lowercase_and_drop_single_characters():
    assert tokens("Who is A. Smith? I'm here") == {"who", "is", "smith", "here"}
    assert tokens("") == set()


def test_score_counts_overlap_across_question_context_and_answer():
    e = Entry("where is the office", "in Paris", context="acme headquarters")
    [(entry, score)] = match_session_entries("acme office paris", [e])
    assert entry is e
    assert score == 3


def test_zero_overlap_is_excluded():
    e = Entry("favourite colour", "blue")
    assert match_session_entries("acme office", [e]) == []


def test_ordered_by_score_then_recency():
    old_best = Entry("acme office paris", "yes", created_at="2024-01-01")
    new_weak = Entry("acme", "x", created_at="2024-06-01")
    old_weak = Entry("acme", "y", created_at="2023-01-01")
    undated = Entry("acme", "z")
    result = match_session_entries("acme office paris", [old_weak, undated, new_weak, old_best])
    assert [e for e, _ in result] == [old_best, new_weak, old_weak, undated]
    assert [s for _, s in result] == [3, 1, 1, 1]


def test_limit_defaults_to_fifteen():
    entries = [Entry(f"acme {i}", "a", created_at=f"2024-01-{i + 1:02d}") for i in range(20)]
    assert len(match_session_entries("acme", entries)) == 15
    assert len(match_session_entries("acme", entries, limit=3)) == 3


def test_dict_entries_are_accepted():
    e = {"question": "acme ceo", "answer": "bob", "context": None, "created_at": None}
    assert match_session_entries("who is acme ceo", [e]) == [(e, 2)]
