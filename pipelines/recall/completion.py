"""Completion: turn retrieved items into a generated answer through the LLM gateway port.

With no model behind the gateway (offline default) the retrieved items are the answer and
the result says so; a failing model call degrades the same way, with the error in the note.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.models.payloads import Provenance, RecallItem
from engram.pipelines.recall import graph
from engram.pipelines.recall.context import RecallContext
from engram.prompts.recall import answer_prompt, followup_prompt, split_reasoning

NO_LLM_NOTE = ("no LLM configured (offline default): the items are the retrieved context, not a generated "
               "answer; set ENGRAM_LLM_MODEL to generate answers")
MAX_ITEM_CHARS = 1500
MAX_CONTEXT_CHARS = 12000

_LABEL = {"chunk": "passage", "summary": "summary", "triplet": "fact", "session": "earlier in this session"}


@dataclass
class Completion:
    answer: RecallItem | None  # None: nothing generated
    items: list[RecallItem]  # the context the answer rests on
    note: str | None = None


def render_line(number: int, item: RecallItem) -> str:
    label = _LABEL.get(item.kind, item.kind)
    if item.provenance.title and item.kind in ("chunk", "summary"):
        label += f" · {item.provenance.title}"
    text = " ".join(item.text.split())
    if len(text) > MAX_ITEM_CHARS:
        text = text[:MAX_ITEM_CHARS] + " …"
    line = f"[{number}] ({label}) {text}"
    if item.via:
        line += f" — linked by: {'; '.join(item.via)}"
    if item.passage:
        passage = " ".join(item.passage.split())
        line += f" — from the passage: {passage[:MAX_ITEM_CHARS]}"
    if item.superseded_facts:
        for f in item.superseded_facts:
            by = f'replaced by "{f["by"]}"' if f.get("by") else (
                f'no longer valid since {f["until"]}' if f.get("until") else "no longer valid")
            line += f' — SUPERSEDED: states "{f["fact"]}", {by}'
    elif item.superseded:
        line += " — SUPERSEDED (no longer current)"
    for c in item.conflicts:
        confidence = c.get("confidence")
        weight = f"; confidence {float(confidence):.2f}" if isinstance(confidence, int | float) else ""
        line += f' — CONFLICT: memory also says "{c.get("fact")}" ({c.get("reason") or "no reason given"}{weight})'
    return line


def render_context(items: list[RecallItem]) -> str:
    lines, used = [], 0
    for number, item in enumerate(items, 1):
        line = render_line(number, item)
        if lines and used + len(line) > MAX_CONTEXT_CHARS:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def answer_item(text: str, items: list[RecallItem]) -> RecallItem:
    """The generated answer, carrying the provenance of everything it was given."""
    chunk_ids = list(dict.fromkeys(c for i in items for c in i.provenance.chunk_ids))
    edge_ids = list(dict.fromkeys(e for i in items for e in i.provenance.edge_ids))
    datasets = {i.provenance.dataset for i in items if i.provenance.dataset}
    return RecallItem(kind="answer", text=text.strip(), score=1.0, provenance=Provenance(
        dataset=datasets.pop() if len(datasets) == 1 else None, chunk_ids=chunk_ids, edge_ids=edge_ids))


def _key(item: RecallItem) -> tuple:
    return (item.kind, tuple(item.provenance.edge_ids) or tuple(item.provenance.chunk_ids), item.text)


def complete(ctx: RecallContext, recipe, items: list[RecallItem], gateway,
             llm_errors: tuple[type[BaseException], ...] = ()) -> Completion:
    """recipe: the search type's (pipelines/recall/registry.Recipe): its style and whether it
    looks up a follow-up first."""
    if not gateway.generates:
        return Completion(None, items, NO_LLM_NOTE)
    try:
        if recipe.followup:
            return _chain_of_thought(ctx, items, gateway, recipe.style or "")
        text = gateway.complete(answer_prompt(ctx.question, render_context(items), recipe.style or ""))
        return Completion(answer_item(text, items), items)
    except llm_errors as exc:
        return Completion(None, items, f"the LLM call failed ({exc}); the items are the retrieved context")


def _chain_of_thought(ctx: RecallContext, items: list[RecallItem], gateway, style: str) -> Completion:
    """Ask for the missing piece, look it up in the graph, then reason to an answer."""
    reply = gateway.complete(followup_prompt(ctx.question, render_context(items))).strip()
    followup = reply.splitlines()[0].strip() if reply else ""
    merged = list(items)
    if followup:
        seen = {_key(i) for i in items}
        merged += [i for i in graph.graph_completion(ctx.with_question(followup)) if _key(i) not in seen]
    text = gateway.complete(answer_prompt(
        ctx.question, render_context(merged), style,
        note=f"A follow-up lookup asked: {followup}" if followup else None))
    answer, reasoning = split_reasoning(text)
    note = f"follow-up lookup: {followup}" if followup else None
    if reasoning:
        note = f"{note}; reasoning: {reasoning}" if note else f"reasoning: {reasoning}"
    return Completion(answer_item(answer, merged), merged, note)
