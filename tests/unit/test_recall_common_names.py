"""The multi-hop walk leaves out names too common to say which passage answers (a
conversation's speakers), by their share of the datasets' chunks."""

from __future__ import annotations

import uuid

from engram.models.search import EdgeWindow
from engram.pipelines.recall import multihop
from engram.pipelines.recall.context import RecallContext, Scope


class ChatSearch:
    """A conversation's speaker is named in every chunk; a friend in two of them."""

    def __init__(self, total: int):
        self.total = total
        self.named = [uuid.uuid4() for _ in range(total)]

    def entities_named(self, datasets, names):
        return [{"id": uuid.uuid4(), "name": n, "display_name": n.title(), "type": "person"}
                for n in names if n in ("caroline", "jonas")]

    def chunk_entities(self, datasets, chunk_ids):
        return []

    def chunks_by_ids(self, chunk_ids):
        return {}

    def facts_in_chunks(self, datasets, chunk_ids, entity_ids, window):
        return []

    def entity_passages(self, datasets, names, patterns, max_degree):
        rows = [{"chunk_id": c, "id": uuid.uuid4(), "name": "caroline", "display_name": "Caroline",
                 "type": "person", "main": True, "degree": self.total, "total": self.total}
                for c in self.named if "caroline" in names]
        rows += [{"chunk_id": c, "id": uuid.uuid4(), "name": "jonas", "display_name": "Jonas",
                  "type": "person", "main": False, "degree": 2, "total": self.total}
                 for c in self.named[:2] if "jonas" in names]
        return rows


def test_a_name_in_most_of_the_chunks_links_nothing():
    """A speaker named in every chunk of a conversation says nothing about which one answers;
    a friend named in two of them does; in a tiny dataset nothing is too common by share."""
    search = ChatSearch(total=40)
    ctx = RecallContext("When did Caroline see Jonas?", 5, Scope([uuid.uuid4()], {}), search, None,
                        EdgeWindow(include_history=False))
    assert {b.chunk_id for b in multihop.expand(ctx, [], 10)} == set(search.named[:2])
    tiny = ChatSearch(total=4)
    ctx = RecallContext("When did Caroline call?", 5, Scope([uuid.uuid4()], {}), tiny, None,
                        EdgeWindow(include_history=False))
    assert {b.chunk_id for b in multihop.expand(ctx, [], 10)} == set(tiny.named)
