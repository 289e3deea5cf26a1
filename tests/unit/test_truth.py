"""Truth subspace (SPEC 6.3): ids, clustering, epochs, signatures and the reader's check."""

from __future__ import annotations

import hashlib
import math
import uuid

import pytest

from engram.pipelines import ids
from engram.pipelines.improve import truth as t
from engram.pipelines.recall.ranking import rank_hybrid, truth_factor

DS = uuid.UUID("00000000-0000-0000-0000-0000000000aa")


def axis(i, dim=10, scale=1.0):
    v = [0.0] * dim
    v[i] = scale
    return v


def embed_axes(mapping):
    """An embedder that maps known texts to given vectors."""
    return lambda texts: [mapping[x] for x in texts]


def test_learnings_are_normalised_deduplicated_sorted_and_unit_length():
    found = t.learnings(["Deploys  need OPS sign-off", "deploys need ops sign-off", "Tests run on CI", " "],
                        embed_axes({"deploys need ops sign-off": axis(0, scale=3.0), "tests run on ci": axis(1)}))
    assert [x.text for x in found] == sorted(["deploys need ops sign-off", "tests run on ci"],
                                             key=lambda s: str(t.learning_id(s)))
    assert all(math.isclose(sum(v * v for v in x.vector), 1.0) for x in found)
    assert found[0].id == t.learning_id(found[0].text)
    assert found[0].id == uuid.uuid5(ids.ENGRAM_NAMESPACE, "TruthLearning:" + found[0].text)


def test_signature_is_sha256_of_sorted_ids():
    a, b = uuid.uuid4(), uuid.uuid4()
    expected = hashlib.sha256("\n".join(sorted([str(a), str(b)])).encode()).hexdigest()
    assert t.signature([b, a]) == t.signature([a, b]) == expected


def test_slot_clustering_opens_k_slots_then_moves_the_nearest_centroid():
    vectors = [axis(i) for i in range(8)] + [t.unit([1.0, 0.2] + [0.0] * 8)]
    slots = t.cluster(vectors, k=8)
    assert len(slots) == 8 and slots[0].count == 2
    expected = t.unit([(1 * 1.0 + vectors[8][0]) / 2, vectors[8][1] / 2] + [0.0] * 8)
    assert slots[0].centroid == pytest.approx(expected)
    assert [s.count for s in slots[1:]] == [1] * 7


def test_epoch_moves_only_when_centroids_move():
    found = t.learnings(["a", "b"], embed_axes({"a": axis(0), "b": axis(1)}))
    first = t.next_basis(None, found)
    assert first.epoch == 1 and first.live
    same = t.next_basis(first, found)
    assert same.epoch == 1 and same.signature == first.signature
    jitter = t.Basis(first.epoch, first.signature, [[x + 1e-7 for x in c] for c in first.centroids])
    assert t.next_basis(jitter, found).epoch == 1  # within tolerance
    more = t.learnings(["a", "b", "c"], embed_axes({"a": axis(0), "b": axis(1), "c": axis(2)}))
    assert t.next_basis(first, more).epoch == 2


def test_coordinates_are_cosines_zero_padded_to_k():
    coords = t.coordinates(axis(0, scale=2.0), [axis(0), axis(1)])
    assert coords == pytest.approx([1.0, 0.0] + [0.0] * 6) and len(coords) == t.K


def _row(cid, vector, basis, dataset=DS, epoch=None, sig=None):
    return {"id": cid, "dataset_id": dataset, "truth_alignment": t.coordinates(vector, basis.centroids),
            "truth_epoch": basis.epoch if epoch is None else epoch,
            "truth_signature": basis.signature if sig is None else sig}


def test_reader_refuses_an_abandoned_basis_that_reached_the_same_epoch():
    """SPEC 6.3's two-failure case: chunks stamped at N+1 over learnings A by a build that
    crashed before committing; a later build over learnings B also reaches N+1."""
    vectors = {"a": axis(0), "b": axis(1), "c": axis(2)}
    live_n = t.next_basis(None, t.learnings(["a"], embed_axes(vectors)))  # epoch N = 1
    crashed = t.next_basis(live_n, t.learnings(["a", "b"], embed_axes(vectors)))  # N+1 over A, never committed
    later = t.next_basis(live_n, t.learnings(["a", "c"], embed_axes(vectors)))  # N+1 over B, committed
    assert crashed.epoch == later.epoch == 2 and crashed.signature != later.signature
    stale = _row("stale", axis(1), crashed)
    fresh = _row("fresh", axis(2), later)
    got = t.scores(axis(2), [stale, fresh], {DS: later})
    assert set(got) == {"fresh"}  # the epoch alone would have let the stale one through
    assert not t.stamp_matches(stale, later) and t.stamp_matches(fresh, later)


def test_no_live_basis_is_neutral():
    basis = t.next_basis(None, t.learnings(["a"], embed_axes({"a": axis(0)})))
    row = _row("x", axis(0), basis)
    assert t.scores(axis(0), [row], {}) == {}
    assert t.scores(axis(0), [row], {DS: t.Basis()}) == {}
    hook = t.truth_hook(lambda ds: {}, lambda q: axis(0))
    assert hook("q", [row]) == {}


@pytest.mark.parametrize("seed", range(20))
def test_factor_stays_in_bounds(seed):
    import random

    rnd = random.Random(seed)
    vec = lambda: [rnd.uniform(-1, 1) for _ in range(10)]  # noqa: E731
    basis = t.next_basis(None, t.learnings([f"l{i}" for i in range(12)],
                                           lambda texts: [vec() for _ in texts]))
    rows = [_row(i, vec(), basis) for i in range(30)]
    for score in t.scores(vec(), rows, {DS: basis}).values():
        assert 0.75 <= truth_factor(score) <= 1.25


def test_an_aligned_chunk_outranks_an_equally_similar_unaligned_one():
    vectors = {"deploys need ops sign-off": axis(0)}
    basis = t.next_basis(None, t.learnings(["Deploys need ops sign-off"], embed_axes(vectors)))
    aligned = _row("aligned", t.unit([0.8, 0.0, 0.6] + [0.0] * 7), basis)
    unaligned = _row("unaligned", t.unit([0.0, 0.8, 0.6] + [0.0] * 7), basis)
    hook = t.truth_hook(lambda ds: {DS: basis}, lambda q: t.unit([0.5, 0.5, 0.7] + [0.0] * 7))
    truth = hook("how do deploys work?", [unaligned, aligned])
    assert truth["aligned"] > 0.5 > truth["unaligned"] - 0.5  # aligned up, unaligned neutral or down
    # Same fused rank positions swapped across two lists: equal base scores; truth breaks the tie.
    ranked = rank_hybrid(["unaligned", "aligned"], ["aligned", "unaligned"], [], top_k=2, truth=truth)
    assert [cid for cid, _ in ranked] == ["aligned", "unaligned"]


def test_the_hook_scores_with_the_recalls_question_vector_not_a_second_embedding():
    vectors = {"deploys need ops sign-off": axis(0)}
    basis = t.next_basis(None, t.learnings(["Deploys need ops sign-off"], embed_axes(vectors)))
    aligned = _row("aligned", t.unit([0.8, 0.0, 0.6] + [0.0] * 7), basis)
    embedded = []
    hook = t.truth_hook(lambda ds: {DS: basis}, lambda q: embedded.append(q) or axis(1))
    question = t.unit([0.5, 0.5, 0.7] + [0.0] * 7)
    assert hook("how do deploys work?", [aligned], lambda: question)["aligned"] > 0.5
    assert embedded == []
    hook("how do deploys work?", [aligned])  # no vector given: the hook embeds the question itself
    assert embedded == ["how do deploys work?"]


class FakeTruthStore:
    """Lessons, the live basis and chunk rows in memory (the TruthPorts interface)."""

    def __init__(self, chunks):
        self.statements: list[str] = []
        self.live: t.Basis | None = None
        self.chunks = chunks  # id -> row with "vector"
        self.log: list[str] = []

    def lesson_statements(self, dataset_id):
        return list(self.statements)

    def basis(self, dataset_id):
        return self.live

    def write_basis(self, dataset_id, basis, learnings):
        self.log.append("basis")
        self.live = basis

    def _todo(self, basis):
        return [r for r in self.chunks.values()
                if (r.get("truth_epoch"), r.get("truth_signature")) != (basis.epoch, basis.signature)]

    def unstamped(self, dataset_id, basis):
        return len(self._todo(basis))

    def stamp_chunks(self, dataset_id, basis, limit):
        todo = self._todo(basis)[:limit]
        for r in todo:
            r.update(truth_alignment=t.coordinates(r["vector"], basis.centroids), truth_epoch=basis.epoch,
                     truth_signature=basis.signature)
        self.log += ["stamp"] * bool(todo)
        return len(todo)


def test_build_writes_centroids_first_is_debounced_and_restamps_an_abandoned_stamp():
    vectors = {"a": axis(0), "b": axis(1), "c": axis(2)}
    embed = embed_axes(vectors)
    chunks = {i: {"id": i, "dataset_id": DS, "vector": axis(i % 3)} for i in range(5)}
    store = FakeTruthStore(chunks)
    assert t.build(store, embed, DS)["status"] == "already_completed"  # no lessons yet
    store.statements = ["A"]
    first = t.build(store, embed, DS, batch=2)
    assert first["status"] == "completed" and first["chunks_stamped"] == 5 and store.log[0] == "basis"
    assert t.build(store, embed, DS)["status"] == "already_completed"  # nothing changed
    # A crashed build over other learnings left a chunk stamped at the NEXT epoch.
    abandoned = t.next_basis(store.live, t.learnings(["a", "b"], embed))
    chunks[0].update(truth_alignment=[0.9] * t.K, truth_epoch=abandoned.epoch, truth_signature=abandoned.signature)
    store.statements = ["A", "C"]
    second = t.build(store, embed, DS)
    assert store.live.epoch == abandoned.epoch and store.live.signature != abandoned.signature
    assert second["chunks_stamped"] == 5  # the abandoned stamp is redone, not trusted
    assert chunks[0]["truth_alignment"] == pytest.approx(t.coordinates(axis(0), store.live.centroids))
    store.statements = []
    assert t.build(store, embed, DS)["status"] == "completed" and not store.live.live  # neutral again
    assert t.build(store, embed, DS)["status"] == "already_completed"
