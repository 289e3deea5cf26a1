"""Turn windows of conversation chunks (pipelines/cognify/windows.py)."""

import uuid

from engram.pipelines.cognify.embedding import texts_to_embed
from engram.pipelines.cognify.windows import spans, turn_windows
from engram.pipelines.ids import window_id

CHUNK = uuid.uuid4()
LINES = ["Leah: did you sign up?", "Callum: yes, the 10k in June", "Leah: amazing", "Callum: training starts monday"]


def _chunk(lines, conversation=True):
    return {"id": CHUNK, "text": "\n".join(lines), "conversation": {"turns": [str(i) for i in range(len(lines))]}
            if conversation else None}


def test_a_conversation_chunk_has_every_run_of_2_and_3_turns():
    found = [(w.width, w.start, w.text) for w in turn_windows(_chunk(LINES))]
    assert found == [(2, 0, "\n".join(LINES[0:2])), (2, 1, "\n".join(LINES[1:3])), (2, 2, "\n".join(LINES[2:4])),
                     (3, 0, "\n".join(LINES[0:3])), (3, 1, "\n".join(LINES[1:4]))]
    assert len({w.id for w in turn_windows(_chunk(LINES))}) == 5
    assert turn_windows(_chunk(LINES))[0].id == window_id(CHUNK, 2, 0)  # deterministic: a reload rewrites, never adds


def test_a_chunk_of_two_turns_has_one_window_of_each_width_and_one_turn_none():
    assert [(w.width, w.start) for w in turn_windows(_chunk(LINES[:2]))] == [(2, 0), (3, 0)]
    assert turn_windows(_chunk(LINES[:1])) == []


def test_prose_has_no_windows():
    assert turn_windows(_chunk(LINES, conversation=False)) == []
    assert spans({"text": "\n".join(LINES)}) == []


def test_the_load_embeds_each_window_under_its_own_id():
    class Draft:
        summaries = entities = entity_types = edges = []

    keyed = texts_to_embed([_chunk(LINES)], Draft())
    assert keyed[0] == (CHUNK, "\n".join(LINES))
    assert keyed[1:] == [(w.id, w.text) for w in turn_windows(_chunk(LINES))]
