"""Evaluation runner: recall every question of a QA set and score it (SQuAD-style metrics).

The prediction is the generated answer when an LLM generated one, else the top context
item's text (EM/F1 are then low by nature); answer-in-context@k says whether the gold
answer occurs in the first k retrieved items, which needs no LLM at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from engram.models.payloads import RecallResult
from engram.pipelines.recall.metrics import aggregate, score_row


class BadQAFile(ValueError):
    pass


def load_qa(lines: Iterable[str]) -> list[dict[str, Any]]:
    """JSON lines of {"question", "answer", ...}; blank lines are skipped, anything else is an error."""
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadQAFile(f"line {number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or "answer" not in row:
            raise BadQAFile(f"line {number}: expected an object with 'question' and 'answer'")
        rows.append(row)
    if not rows:
        raise BadQAFile("no questions in the QA file")
    return rows


def _context(result: RecallResult) -> list[str]:
    return [i.text for i in result.items if i.kind != "answer"]


def evaluate(qa: list[dict[str, Any]], recall: Callable[[str], RecallResult], k: int) -> dict[str, Any]:
    """Per-question rows and aggregate means. A question whose recall fails scores zero and
    keeps its error."""
    rows = []
    for item in qa:
        gold = str(item["answer"])
        row: dict[str, Any] = {"question": item["question"], "answer": gold}
        try:
            result = recall(item["question"])
        except Exception as exc:  # one failing question must not lose the whole report
            rows.append({**row, "error": f"{type(exc).__name__}: {exc}", "exact_match": 0.0, "f1": 0.0,
                         "answer_in_context": 0.0})
            continue
        answer = next((i.text for i in result.items if i.kind == "answer"), None)
        context = _context(result)
        prediction = answer if result.generated and answer is not None else (context[0] if context else "")
        row.update(score_row(prediction, gold, context[:k]))
        row.update(prediction=prediction, generated=result.generated, search_type=result.search_type,
                   top_titles=[i.provenance.title for i in result.items if i.kind != "answer"][:k])
        rows.append(row)
    means = aggregate(rows)
    metrics = {
        "exact_match": means.get("exact_match", 0.0),
        "f1": means.get("f1", 0.0),
        f"answer_in_context@{k}": means.get("answer_in_context", 0.0),
        "count": int(means["count"]),
        "errors": sum(1 for r in rows if "error" in r),
        "generated": sum(1 for r in rows if r.get("generated")),
    }
    return {"k": k, "metrics": metrics, "questions": rows}
