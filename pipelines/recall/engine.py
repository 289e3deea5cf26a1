"""Recall, end to end over ports: choose the search type, run the session lane and the graph
lane, fall back when an auto-routed type finds nothing, complete (SPEC §5).

The caller (tasks/recall.py) authorises the datasets first and hands in only readable ones.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from engram.models.payloads import Provenance, RecallItem, RecallRequest, RecallResult
from engram.models.search import EdgeWindow, SearchType
from engram.pipelines.ids import recall_entry_id
from engram.pipelines.recall import captures, timeline
from engram.pipelines.recall.completion import complete, render_context
from engram.pipelines.recall.context import RecallContext, Scope, TruthHook
from engram.pipelines.recall.registry import REGISTRY, serves
from engram.pipelines.recall.router import DEFAULT_TYPE, route
from engram.pipelines.recall.session import DEFAULT_LIMIT, match_session_entries, tokens

SESSION_SCAN = 500  # most recent entries of a session that token matching looks at
SESSION_CONTEXT_CHARS = 4000  # context kept with a stored session entry


class UnsupportedSearchType(ValueError):
    """A pinned search type recall's engine cannot serve (the agentic one runs its own loop)."""


@dataclass
class RecallPorts:
    search: Any  # SearchRepository interface
    embedder: Any  # embed(texts) -> vectors
    gateway: Any  # generates, complete(messages)
    sessions: Any = None  # SessionRepository interface; None: no session lane
    truth: TruthHook | None = None
    llm_errors: tuple[type[BaseException], ...] = ()  # model failures that degrade to context
    bm25: tuple[float, float] = (1.5, 0.75)  # Okapi BM25 (k1, b)


def choose_type(requested: str | None) -> tuple[SearchType, bool]:
    """(type, pinned). FEELING_LUCKY and no type both mean: let the router pick."""
    if requested and requested != SearchType.FEELING_LUCKY.value:
        return SearchType(requested), True
    return DEFAULT_TYPE, False


def _retrieve(ctx: RecallContext, search_type: SearchType, routed: bool = False) -> list[RecallItem]:
    if routed and REGISTRY[search_type].routed_passages:
        search_type = DEFAULT_TYPE
    recipe = REGISTRY[search_type]
    ctx.weights = recipe.weights_for(ctx.question)
    return timeline.apply(ctx, recipe.lane(ctx))


def session_items(req: RecallRequest, scope: Scope, ports: RecallPorts) -> list[RecallItem]:
    if not req.session_id or ports.sessions is None or not scope.datasets:
        return []
    entries = ports.sessions.entries(scope.datasets, req.session_id, SESSION_SCAN, user_id=scope.user_id)
    wanted = max(1, len(tokens(req.question)))
    items = []
    for entry, overlap in match_session_entries(req.question, entries, min(DEFAULT_LIMIT, req.top_k)):
        text = f"Q: {entry['question']}\nA: {entry['answer']}" if entry["answer"] else f"Q: {entry['question']}"
        if entry.get("context"):
            text += f"\nContext: {entry['context']}"
        items.append(RecallItem(kind="session", text=text, score=round(overlap / wanted, 6), provenance=Provenance(
            dataset=scope.name(entry["dataset_id"]), chunk_ids=list(entry.get("source_chunk_ids") or []),
            edge_ids=list(entry.get("source_edge_ids") or []))))
    return items


def run_recall(req: RecallRequest, scope: Scope, ports: RecallPorts) -> RecallResult:
    search_type, pinned = choose_type(req.search_type)
    decision = None if pinned else route(req.question)
    if decision is not None:
        search_type = decision.search_type
    if req.node_sets and not (search_type in REGISTRY and REGISTRY[search_type].node_sets):
        if pinned:
            raise UnsupportedSearchType(f"search type {search_type.value} does not filter by node_sets; use one of "
                                        + ", ".join(sorted(t.value for t, r in REGISTRY.items() if r.node_sets)))
        search_type = DEFAULT_TYPE
    if not serves(search_type):
        if pinned:
            raise UnsupportedSearchType(f"search type {search_type.value} is not available for recall")
        search_type = DEFAULT_TYPE
    ctx = RecallContext(req.question, req.top_k, scope, ports.search, ports.embedder,
                        EdgeWindow(req.as_of, req.include_history), ports.truth, bm25=ports.bm25,
                        filters=req.capture_filter)
    if scope.datasets and REGISTRY[search_type].vector:
        ctx.prefetch_vector()
    remembered = session_items(req, scope, ports)
    sources = ["session"] if remembered else []
    notes: list[str] = []
    items: list[RecallItem] = []
    fallback_from = None
    # Session only: a session hit answers and the graph is skipped (auto-fallthrough).
    if not (remembered and req.session_id and not req.datasets) and scope.datasets:
        items = _retrieve(ctx, search_type, routed=not pinned)
        if not items and not pinned and search_type is not DEFAULT_TYPE:
            fallback_from, search_type = search_type, DEFAULT_TYPE
            notes.append(f"auto-routed {fallback_from.value} found nothing; fell back to {DEFAULT_TYPE.value}")
            items = _retrieve(ctx, search_type)
        sources.append("graph")
    elif not scope.datasets:
        notes.append("no readable dataset to search")
    context = remembered + captures.attach(items, ports.search)
    generated, answer = False, None
    if REGISTRY[search_type].completes and context:
        done = complete(ctx, REGISTRY[search_type], context, ports.gateway, ports.llm_errors)
        context, answer = done.items, done.answer
        generated = answer is not None
        if done.note:
            notes.append(done.note)
    return RecallResult(
        question=req.question,
        search_type=search_type.value,
        routed=not pinned,
        route_score=decision.score if decision is not None else None,
        generated=generated,
        note="; ".join(notes) or None,
        items=([answer] if answer else []) + context,
        datasets=[scope.name(d) for d in scope.datasets],
        sources=sources,
        fallback_from=fallback_from.value if fallback_from else None,
    )


def session_entry(req: RecallRequest, scope: Scope, result: RecallResult) -> dict | None:
    """The entry a recall with a session stores: question, generated answer, context, sources.

    Only generated answers are stored (retrieved context alone is memory already); nothing
    is stored when the session itself answered or there is no dataset the user may write to
    keep it in (a read-only share never gains entries). The entry goes to the writable
    dataset of the best context item.
    """
    answer = next((i.text for i in result.items if i.kind == "answer"), None)
    writable = [d for d in scope.datasets if d in scope.writable]
    if not req.session_id or answer is None or "graph" not in result.sources or not writable:
        return None
    by_name = {name: dataset for dataset, name in scope.names.items() if dataset in scope.writable}
    context = [i for i in result.items if i.kind not in ("answer", "session")]
    dataset = next((by_name[i.provenance.dataset] for i in context if i.provenance.dataset in by_name),
                   writable[0])
    return {
        "dataset_id": dataset,
        "session_id": req.session_id,
        "user_id": scope.user_id,
        "question": req.question,
        "answer": answer,
        "context": render_context(context)[:SESSION_CONTEXT_CHARS],
        "source_chunk_ids": list(dict.fromkeys(c for i in context for c in i.provenance.chunk_ids)),
        "source_edge_ids": list(dict.fromkeys(e for i in context for e in i.provenance.edge_ids)),
    }


def entry_id(request_id: str | None) -> uuid.UUID | None:
    """A deterministic entry id per task delivery, so a redelivered recall stores once."""
    return recall_entry_id(request_id) if request_id else None
