"""The fleet embedding logic over an in-memory store port: reuse, shared batches, the window."""

from __future__ import annotations

import contextlib
import uuid

import pytest

from engram.adapters.embed import length_batches
from engram.pipelines.cognify.embedding import BatchPolicy, ItemForgotten, normalise, text_key, vectors_for


class MemoryEmbeddings:
    """The EmbeddingRepository contract, in memory (a claim is whatever is pending)."""

    def __init__(self):
        self.vectors: dict[tuple, list[float]] = {}
        self.requests: dict[tuple, tuple[str, float]] = {}
        self.refs: set[tuple] = set()
        self.items: set[uuid.UUID] = set()
        self.held: set[bytes] = set()  # texts inside another batch's claim
        self.now = 0.0

    def reference(self, model, dimension, hashes, item):
        if item not in self.items:
            return False
        self.refs |= {(model, dimension, h, item) for h in hashes}
        return True

    def lookup(self, model, dimension, hashes):
        return {h: self.vectors[(model, dimension, h)] for h in hashes if (model, dimension, h) in self.vectors}

    def request(self, model, dimension, pending):
        missing = 0
        for h, t in pending.items():
            if (model, dimension, h) not in self.vectors:
                self.requests.setdefault((model, dimension, h), (t, self.now))
                missing += 1
        return missing

    def claim(self, model, dimension, limit, window_seconds, timeout_seconds):
        mine = sorted(((k, v) for k, v in self.requests.items() if k[:2] == (model, dimension) and k[2] not in self.held),
                      key=lambda kv: kv[1][1])
        mine = mine[:limit]
        if not mine or (len(mine) < limit and self.now - mine[0][1][1] < window_seconds):
            return []
        return [(k[2], t) for k, (t, _) in mine]

    def pending(self, model, dimension):
        return sum(k[:2] == (model, dimension) for k in self.requests)

    def ripens_in(self, model, dimension, window_seconds):
        ages = [at for k, (_, at) in self.requests.items() if k[:2] == (model, dimension) and k[2] not in self.held]
        return min(ages) + window_seconds - self.now if ages else None

    def store(self, model, dimension, vectors):
        for h, v in vectors.items():
            self.vectors.setdefault((model, dimension, h), v)
            self.requests.pop((model, dimension, h), None)
        return len(vectors)


class MemoryStore:
    def __init__(self):
        self.embeddings = MemoryEmbeddings()

    @contextlib.contextmanager
    def unit_of_work(self):
        yield self


class CountingEmbedder:
    name, dimension = "test:len", 2

    def __init__(self):
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return [[float(len(t)), float(sum(map(ord, t)) % 97)] for t in texts]


def _item(store) -> uuid.UUID:
    item = uuid.uuid4()
    store.embeddings.items.add(item)
    return item


def test_normalised_texts_share_a_key_and_a_changed_text_does_not():
    assert normalise("  Harbor\n Dynamics\t") == "Harbor Dynamics"
    assert text_key(normalise("Harbor  Dynamics")) == text_key(normalise("Harbor Dynamics"))
    assert text_key(normalise("Harbor Dynamics")) != text_key(normalise("Harbor Dynamic"))


def test_each_distinct_text_is_embedded_once_across_items():
    store, embedder = MemoryStore(), CountingEmbedder()
    policy = BatchPolicy(window_seconds=0)
    first, stats1 = vectors_for(["Acme", "Acme ", "a long chunk text"], _item(store), store=store,
                                embedder=embedder, policy=policy)
    second, stats2 = vectors_for(["Acme", "new text"], _item(store), store=store, embedder=embedder, policy=policy)
    assert first[0] == first[1] == second[0]
    assert sorted(t for call in embedder.calls for t in call) == ["Acme", "a long chunk text", "new text"]
    assert (stats1.unique, stats1.reused, stats1.embedded) == (2, 0, 2)
    assert (stats2.unique, stats2.reused, stats2.embedded) == (2, 1, 1)


def test_an_item_waiting_for_its_vectors_claims_at_once_with_the_other_pending_texts():
    store, embedder = MemoryStore(), CountingEmbedder()
    other = _item(store)
    store.embeddings.request("test:len", 2, {text_key("other item"): "other item"})  # another item's text
    store.embeddings.reference("test:len", 2, [text_key("other item")], other)

    vectors, stats = vectors_for(["mine"], _item(store), store=store, embedder=embedder,
                                 sleep=lambda s: pytest.fail("an idle wait for company"),
                                 policy=BatchPolicy(window_seconds=60, batch_min=10, batch_max=10),
                                 clock=lambda: store.embeddings.now)
    assert stats.batches == 1 and sorted(embedder.calls[0]) == ["mine", "other item"]
    assert vectors == [[4.0, float(sum(map(ord, "mine")) % 97)]]


def test_a_batch_task_leaves_texts_inside_their_window_and_says_when_they_are_due():
    from engram.pipelines.cognify.embedding import drain, request_vectors

    store, embedder = MemoryStore(), CountingEmbedder()
    policy = BatchPolicy(window_seconds=0.5, batch_min=256, poll_seconds=0.02)
    request_vectors(["a lone chunk"], _item(store), embeddings=store.embeddings, model="test:len", dimension=2)
    store.embeddings.now = 0.1
    stats, due_in = drain(store, embedder, policy, sleep=lambda s: pytest.fail("slept out the window"),
                          clock=lambda: store.embeddings.now)
    assert (stats.batches, embedder.calls) == (0, []) and due_in == pytest.approx(0.4)
    store.embeddings.now = 0.5  # the wake-up
    stats, due_in = drain(store, embedder, policy, clock=lambda: store.embeddings.now)
    assert stats.embedded == 1 and due_in is None


def test_a_full_batch_does_not_wait_for_the_window():
    store, embedder = MemoryStore(), CountingEmbedder()
    texts = [f"text {i}" for i in range(4)]
    _, stats = vectors_for(texts, _item(store), store=store, embedder=embedder,
                           sleep=lambda s: pytest.fail("slept"), policy=BatchPolicy(window_seconds=60, batch_max=2))
    assert stats.batches == 2 and [len(c) for c in embedder.calls] == [2, 2]


def test_an_item_forgotten_while_waiting_stops_with_a_clear_error():
    store, embedder = MemoryStore(), CountingEmbedder()
    item = _item(store)
    store.embeddings.held.add(text_key("orphan"))  # its text is in another batch: the item waits
    clock = iter(range(100))

    def sleep(_):
        store.embeddings.items.discard(item)
        store.embeddings.requests.clear()  # forget dropped the unreferenced request

    with pytest.raises(ItemForgotten, match="forgotten"):
        vectors_for(["orphan"], item, store=store, embedder=embedder, sleep=sleep,
                    policy=BatchPolicy(window_seconds=1000), clock=lambda: float(next(clock)))


def test_an_item_whose_texts_other_batches_hold_gives_its_worker_back_when_allowed():
    """Nothing left to claim and its texts in another batch: a load allowed to give way raises
    VectorsPending (its worker runs other stages meanwhile) instead of idling; one not allowed
    waits, as before, and gets its vector once the other batch stores it."""
    from engram.pipelines.cognify.embedding import VectorsPending

    store, embedder = MemoryStore(), CountingEmbedder()
    item = _item(store)
    key = text_key("held")
    store.embeddings.held.add(key)  # another batch's claim
    other = _item(store)
    store.embeddings.request("test:len", 2, {text_key("pending"): "pending"})  # another item's, claimable
    store.embeddings.reference("test:len", 2, [text_key("pending")], other)
    policy = BatchPolicy(window_seconds=0, give_way_seconds=1.5)
    with pytest.raises(VectorsPending) as gave:
        vectors_for(["held"], item, store=store, embedder=embedder, policy=policy, give_way=lambda: True,
                    sleep=lambda s: pytest.fail("an idle wait"))
    # It first embedded what it could claim (counted: the fleet's statistics), then gave way.
    assert (gave.value.missing, gave.value.retry_in, gave.value.stats.embedded) == (1, 1.5, 1)
    assert embedder.calls == [["pending"]]
    assert ("test:len", 2, key) in store.embeddings.requests  # still queued for the batch that holds it

    def other_batch_stores(_):
        store.embeddings.held.discard(key)
        store.embeddings.requests.pop(("test:len", 2, key), None)
        store.embeddings.vectors[("test:len", 2, key)] = [9.0, 9.0]

    # Nothing else waits for its worker: it waits in place, asking again now and then (not at
    # every poll: each asking reads the broker's queue depths).
    asked, ticks, polls = [], iter(range(10_000)), []

    def sleep(_):
        polls.append(1)
        if len(polls) == 20:
            other_batch_stores(None)

    vectors, _ = vectors_for(["held"], item, store=store, embedder=embedder, policy=policy, sleep=sleep,
                             give_way=lambda: asked.append(1) and False, clock=lambda: next(ticks) * 0.01)
    assert vectors == [[9.0, 9.0]] and embedder.calls == [["pending"]] and 1 < len(asked) < len(polls)


def test_a_long_text_is_not_padded_together_with_short_names():
    texts = ["word " * 200, "Acme", "Harbor Dynamics", "Alice Moreau", "ceo of"]
    batches = length_batches(texts, max_batch=64)
    assert [0] in batches and sorted(i for b in batches for i in b) == list(range(5))


def test_texts_requested_early_are_embedded_by_a_batch_and_then_reused():
    from engram.pipelines.cognify.embedding import drain, request_vectors

    store, embedder = MemoryStore(), CountingEmbedder()
    items = [_item(store) for _ in range(3)]
    for i, item in enumerate(items):
        request_vectors([f"chunk {i}", "Acme"], item, embeddings=store.embeddings, model="test:len", dimension=2)
    store.embeddings.now = 1.0  # the window has passed
    stats, due_in = drain(store, embedder, BatchPolicy(window_seconds=0.05), clock=lambda: store.embeddings.now)
    assert due_in is None  # nothing left waiting
    assert stats.batches == 1 and sorted(embedder.calls[0]) == ["Acme", "chunk 0", "chunk 1", "chunk 2"]
    _, later = vectors_for(["chunk 1", "Acme"], items[1], store=store, embedder=embedder, policy=BatchPolicy())
    assert (later.reused, later.embedded) == (2, 0) and len(embedder.calls) == 1


def test_a_backlog_is_claimed_in_halves_within_the_bounds():
    from engram.pipelines.cognify.embedding import claim_size

    policy = BatchPolicy(batch_min=64, batch_max=512)
    assert [claim_size(n, policy) for n in (0, 10, 100, 129, 700, 5000)] == [64, 64, 64, 65, 350, 512]


def test_a_backlog_goes_in_shrinking_halves_so_no_claim_leaves_a_long_tail():
    store, embedder = MemoryStore(), CountingEmbedder()
    texts = [f"text {i}" for i in range(600)]
    _, stats = vectors_for(texts, _item(store), store=store, embedder=embedder,
                           sleep=lambda s: pytest.fail("slept"),
                           policy=BatchPolicy(batch_min=64, batch_max=512, window_seconds=0))
    assert [len(c) for c in embedder.calls] == [300, 150, 75, 64, 11]
