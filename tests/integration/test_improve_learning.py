"""The opt-in stages update_user_preferences and global_context_index on a real worker (offline
default: both are deterministic and need no LLM)."""

from __future__ import annotations

import pytest
from improve_helpers import dataset_id, rows, runs, settled, stages, wait_until


@pytest.fixture(scope="module")
def learner(spawn_worker):
    handle = spawn_worker({"ENGRAM_IMPROVE_AUTOMATIC": "false",
                           "ENGRAM_IMPROVE_OPT_IN_STAGES": "update_user_preferences,global_context_index"},
                          concurrency=2, name="learner")
    yield handle
    handle.stop()


def _improve(learner, store, dataset: str, session: str) -> dict:
    before = len(runs(store, dataset, session))
    assert learner.client.improve(dataset, session_ids=[session]).status == "started"
    wait_until(lambda: len(runs(store, dataset, session)) > before and settled(store, dataset), what="improve")
    return stages(store, runs(store, dataset, session)[before]["id"])


def test_preferences_are_stored_once_and_recallable_by_user_node_set(learner, store, dataset_name):
    client = learner.client
    client.remember("Kestrel Foods is a seafood company in Port Alder. Sunita Rao is the CEO of Kestrel Foods.",
                    dataset=dataset_name, background=False)
    client.remember_turn(dataset=dataset_name, session_id="p", question="I prefer short answers. Who runs Kestrel?",
                         answer="Sunita Rao.")
    client.remember_turn(dataset=dataset_name, session_id="p", question="i prefer short answers!", answer="Noted.")
    got = _improve(learner, store, dataset_name, "p")
    assert got["update_user_preferences"]["status"] == "completed"
    assert got["update_user_preferences"]["counts"]["new"] == 1
    ds = dataset_id(store, dataset_name)
    (pref,) = rows(store, "SELECT * FROM user_preferences WHERE dataset_id = :d", d=ds)
    assert pref["statement"] == "I prefer short answers." and pref["session_id"] == "p"
    result = client.recall("How should answers be?", datasets=[dataset_name], search_type="CHUNKS",
                           node_sets=["user_preferences:default"])
    assert [i.text for i in result.items] == ["# User preference (default)\n\ndefault said: I prefer short answers."]

    overview = got["global_context_index"]
    assert overview["status"] == "completed", overview
    (doc,) = rows(store, "SELECT content, node_sets FROM data_items WHERE dataset_id = :d"
                  " AND 'global_context' = ANY(node_sets)", d=ds)
    assert doc["content"].startswith(f"# Dataset overview ({dataset_name})") and "Kestrel Foods" in doc["content"]

    client.remember_turn(dataset=dataset_name, session_id="p", question="Thanks.", answer="You're welcome.")
    again = _improve(learner, store, dataset_name, "p")
    assert again["update_user_preferences"]["counts"]["new"] == 0
    assert len(rows(store, "SELECT 1 FROM data_items WHERE dataset_id = :d AND 'global_context' = ANY(node_sets)",
                    d=ds)) == 1  # replaced, never piled up
