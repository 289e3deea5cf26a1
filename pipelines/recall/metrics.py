"""SQuAD-style answer metrics for recall benchmarks (pure; no model calls)."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str | None) -> str:
    """Lower-case, drop punctuation and articles, collapse whitespace (the SQuAD rule)."""
    text = (text or "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(pred: str | None, gold: str | None) -> float:
    return float(normalize_answer(pred) == normalize_answer(gold))


def token_f1(pred: str | None, gold: str | None) -> float:
    pred_tokens = normalize_answer(pred).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        # Both empty is a perfect (vacuous) match; one empty is a miss.
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def answer_in_context(gold: str | None, contexts: Iterable[str | None]) -> bool:
    """Whether the normalised gold answer occurs in any normalised retrieved context.

    Matching is on whole tokens so "art" is not found inside "smart".
    """
    needle = normalize_answer(gold)
    if not needle:
        return False
    return any(f" {needle} " in f" {normalize_answer(c)} " for c in contexts)


def score_row(pred: str | None, gold: str | None, contexts: Sequence[str | None] = ()) -> dict[str, float]:
    """The per-question metrics that aggregate() averages."""
    return {
        "exact_match": exact_match(pred, gold),
        "f1": token_f1(pred, gold),
        "answer_in_context": float(answer_in_context(gold, contexts)),
    }


def aggregate(rows: Iterable[Mapping[str, float | int | bool | None]]) -> dict[str, float]:
    """Mean of every numeric metric over the rows that carry it, plus "count" (rows seen).

    Non-numeric values (ids, texts) and None are ignored, so rows may carry extra fields.
    """
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    total = 0
    for row in rows:
        total += 1
        for key, value in row.items():
            if isinstance(value, bool | int | float):
                sums[key] = sums.get(key, 0.0) + float(value)
                counts[key] = counts.get(key, 0) + 1
    result: dict[str, float] = {key: sums[key] / counts[key] for key in sums}
    result["count"] = float(total)
    return result
