"""Hybrid ranking: reciprocal-rank fusion, then importance and truth factors (SPEC §5, §6.3)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

Id = TypeVar("Id", bound=Hashable)

NEUTRAL = 0.5  # importance / truth score that leaves a result's score unchanged (factor 1.0)


def _clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def rrf_k(top_k: int) -> int:
    """Smaller k for small requests so the head of each list matters more."""
    return max(30, min(60, 20 + 2 * top_k))


def rrf_fuse(rank_lists: Sequence[Sequence[Id]], top_k: int) -> dict[Id, float]:
    """score(id) = Σ over lists of 1/(rrf_k + rank + 1), rank 0-based.

    An id repeated inside one list counts once, at its best rank.
    """
    k = rrf_k(top_k)
    scores: dict[Id, float] = {}
    for ranked in rank_lists:
        seen: set[Id] = set()
        for rank, item in enumerate(ranked):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return scores


def importance_factor(importance: float | None) -> float:
    """0.75 + 0.5·importance, importance clamped to [0, 1]; unknown counts as neutral."""
    value = NEUTRAL if importance is None else _clamp01(float(importance))
    return 0.75 + 0.5 * value


def truth_score(node_coords: Sequence[float] | None, query_coords: Sequence[float] | None) -> float:
    """clamp(Σ node_i·max(q_i, 0) / Σ max(q_i, 0), 0, 1); 0.5 when empty or zero weight.

    Coordinates are zero-padded to the same k; a shorter vector counts as padded with zeros.
    """
    if not node_coords or not query_coords:
        return NEUTRAL
    weights = [max(float(q), 0.0) for q in query_coords]
    total = sum(weights)
    if total <= 0.0:
        return NEUTRAL
    dot = sum(float(n) * w for n, w in zip(node_coords, weights))
    return _clamp01(dot / total)


def truth_factor(score: float | None) -> float:
    """0.75 + 0.5·truth_score, in [0.75, 1.25]; None counts as neutral."""
    value = NEUTRAL if score is None else _clamp01(float(score))
    return 0.75 + 0.5 * value


def rank_hybrid(
    chunk_vec_ids: Sequence[Id],
    summary_vec_ids: Sequence[Id],
    lexical_ids: Sequence[Id],
    top_k: int,
    importance: Mapping[Id, float | None] | None = None,
    truth: Mapping[Id, float | None] | None = None,
) -> list[tuple[Id, float]]:
    """Fuse the three ranked id lists and apply the per-id factors.

    All three lists must already be in one id space (the caller maps summary hits to their
    chunk). `importance` and `truth` hold per-id importance and truth *scores* in [0, 1];
    missing ids are neutral. Returns at most top_k (id, score) pairs (all of them when
    top_k <= 0), score descending, ties broken by str(id) ascending so equal inputs always
    give the same order.
    """
    lists = {"chunks": chunk_vec_ids, "summaries": summary_vec_ids, "lexical": lexical_ids}
    return rank_weighted(lists, dict.fromkeys(lists, 1.0), top_k, importance, truth)


def rank_weighted(
    lists: Mapping[str, Sequence[Id]],
    weights: Mapping[str, float],
    top_k: int,
    importance: Mapping[Id, float | None] | None = None,
    truth: Mapping[Id, float | None] | None = None,
    scores: Mapping[str, Mapping[Id, float]] | None = None,
) -> list[tuple[Id, float]]:
    """Weighted RRF: score(id) = Σ over named lists of weight/(rrf_k + rank + 1), then the
    importance and truth factors; lists without a weight count 0. Order and ties as rank_hybrid.

    A list with `scores` (e.g. the graph walk's) also scales each term by score / its best score,
    so a list whose head stands far above the rest says so (rank alone flattens it)."""
    importance = importance or {}
    truth = truth or {}
    scores = scores or {}
    k = rrf_k(top_k)
    fused: dict[Id, float] = {}
    for name, ranked in lists.items():
        weight = float(weights.get(name, 0.0))
        if weight <= 0:
            continue
        own = scores.get(name) or {}
        best = max(own.values(), default=0.0)
        seen: set[Id] = set()
        for rank, item in enumerate(ranked):
            if item in seen:
                continue
            seen.add(item)
            share = max(0.0, own.get(item, 0.0)) / best if best > 0 else 1.0
            fused[item] = fused.get(item, 0.0) + weight * share / (k + rank + 1)
    scored = [
        (item, base * importance_factor(importance.get(item)) * truth_factor(truth.get(item)))
        for item, base in fused.items()
    ]
    scored.sort(key=lambda pair: (-pair[1], str(pair[0])))
    return scored[:top_k] if top_k > 0 else scored


def fuse_scores(scored: Mapping[str, Sequence[tuple[Id, float]]], weights: Mapping[str, float]) -> list[Id]:
    """One ranked list from several scored lists (best first), by the weighted sum of each
    list's standardised scores (CombSUM of z-scores) over their union.

    Unlike rank fusion it keeps how far apart a list's scores are: a passage one list puts far
    ahead keeps that lead, while a list whose scores are flat (a weak signal for this question)
    moves little. A list scores only its own top: an item it did not return counts as its last
    score. A list whose scores are all equal adds nothing. Ties: first seen first."""
    order: dict[Id, None] = {}
    for name, pairs in scored.items():
        if weights.get(name, 0.0) > 0:
            order.update((item, None) for item, _ in pairs)
    items = list(order)
    total = dict.fromkeys(items, 0.0)
    for name, pairs in scored.items():
        weight = float(weights.get(name, 0.0))
        if weight <= 0 or not pairs:
            continue
        own = dict(pairs)
        last = min(own.values())
        values = [own.get(item, last) for item in items]
        mean = sum(values) / len(values)
        spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        if spread <= 0:
            continue
        for item, value in zip(items, values):
            total[item] += weight * (value - mean) / spread
    return sorted(items, key=lambda item: -total[item])
