"""update_user_preferences and global_context_index: the pure parts."""

from __future__ import annotations

import uuid

from engram.pipelines.improve.stages import global_context, preferences

DS, ALICE = uuid.uuid4(), uuid.uuid4()


def test_preference_sentences_are_found_in_the_users_words_only():
    entries = [
        {"id": uuid.uuid4(), "seq": 1, "user_id": ALICE, "question": "I prefer short answers. What is Kestrel?",
         "answer": "I always answer at length."},
        {"id": uuid.uuid4(), "seq": 2, "user_id": ALICE, "question": "Please always cite the source!\nthanks"},
        {"id": uuid.uuid4(), "seq": 3, "user_id": ALICE, "question": "i prefer  short answers"},
        {"id": uuid.uuid4(), "seq": 4, "user_id": None, "question": "I like tea."},
        {"id": uuid.uuid4(), "seq": 5, "user_id": ALICE, "question": "Who is the CEO of Kestrel Foods?"},
    ]
    rows = preferences.extract(DS, "s1", entries)
    assert [r["statement"] for r in rows] == ["I prefer short answers.", "Please always cite the source!"]
    assert rows[0]["id"] == preferences.preference_id(DS, ALICE, "i prefer short answers")
    assert preferences.render("alice", rows[0]["statement"]) == \
        "# User preference (alice)\n\nalice said: I prefer short answers.\n"
    assert preferences.node_sets("alice") == ["user_preferences", "user_preferences:alice"]


def test_overview_is_deterministic_and_lists_facts_under_their_entity():
    entities = [{"name": "Kestrel Foods", "type": "organization", "description": "A seafood company."},
                {"name": "Sunita Rao", "type": "person", "description": ""}]
    facts = [{"source": "Sunita Rao", "relationship": "ceo_of", "target": "Kestrel Foods"},
             {"source": "Kestrel Foods", "relationship": "buys_from", "target": "Merrow Cooperative"}]
    text = global_context.render("kb", entities, facts)
    assert text == global_context.render("kb", entities, list(reversed(facts)))
    assert text.startswith("# Dataset overview (kb)\n\nMain entities: Kestrel Foods, Sunita Rao.\n")
    assert "- Sunita Rao (person)\n  - Sunita Rao ceo of Kestrel Foods." in text
    assert global_context.render("kb", [], []).endswith("no entities yet.\n")
