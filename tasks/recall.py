"""engram.recall: authorise every dataset first, then recall through the pure pipeline.

Dataset rules: `user` defaults to "default"; named datasets are looked up as the user's own
first, then shared ones, and each must grant the user `read` (else UnknownDataset /
AccessDenied, never a silently empty answer). No datasets named means every dataset the
user may read; with a session_id and none readable, only the (empty) session lane runs.
"""

from __future__ import annotations

import uuid

from pydantic import ValidationError

from engram.adapters.embed import get_embedder
from engram.adapters.llm.errors import LLMError
from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.store import Store, UnitOfWork
from engram.adapters.store.access import AccessDenied, UnknownDataset
from engram.models.payloads import LessonProvenance, RecallRequest, RecallResult, RememberRequest
from engram.pipelines import ids
from engram.pipelines.improve import truth
from engram.pipelines.intake import writable_dataset
from engram.pipelines.recall.context import Scope
from engram.pipelines.recall.completion import render_context
from engram.pipelines.recall.engine import RecallPorts, entry_id, run_recall, session_entry
from engram.pipelines.recall.registry import AGENT_MEMORY, is_agentic
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.tasks.observe import observed_recall
from engram.adapters.llm import usage
from engram.celery_app import app
from engram.pipelines.agentic.completion import AgenticPorts, agentic_recall
from engram.pipelines.agentic.loop import Limits
from engram.pipelines.agentic.tools import PERMISSIONS, ToolInvocationError
from engram.tasks.agentic import configured_tools


def authorised_scope(uow: UnitOfWork, req: RecallRequest) -> Scope:
    user_id = ids.user_id(req.user)
    if req.datasets:
        names = {uow.access.authorise(name, req.user, "read"): name for name in dict.fromkeys(req.datasets)}
    else:
        names = dict(uow.search.readable_datasets(user_id))
        if not names and not req.session_id:
            raise UnknownDataset(f"user {req.user!r} can read no dataset; remember something first or name one")
    writable = frozenset(d for d in names if uow.access.has_permission(d, req.user, "write"))
    return Scope(datasets=list(names), names=names, user_id=user_id, writable=writable)


class _ContextOnly:
    """A gateway port that never generates: lanes used as tools return their context."""

    generates = False


def context_items(question: str, dataset: str, user: str, top_k: int, search_type: str = AGENT_MEMORY.value,
                  embedder=None) -> list:
    """Retrieved items (no generated answer) of one readable dataset."""
    req = RecallRequest(question=question, datasets=[dataset], user=user, top_k=top_k, search_type=search_type)
    with Store().unit_of_work() as uow:
        scope = authorised_scope(uow, req)
        ports = RecallPorts(search=uow.search, embedder=embedder or get_embedder(get_settings()),
                            gateway=_ContextOnly())
        return run_recall(req, scope, ports).items


def agentic_query(req: RecallRequest, *, embedder=None, gateway=None, request_id: str | None = None) -> RecallResult:
    """The agentic search type: the bounded tool loop over one read-authorised dataset (SPEC 8)."""
    settings = get_settings()
    embedder = embedder or get_embedder(settings)
    [name] = req.datasets
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(name, req.user, "read")
        grants = frozenset(p for p in PERMISSIONS if uow.access.has_permission(dataset, req.user, p))
        skills, stored_tools = uow.agentic.skills(dataset), uow.agentic.tools(dataset)
    registry, host_specs = configured_tools()
    notes: list[str] = []

    def search(query: str, search_type: str, top_k: int) -> str:
        return render_context(context_items(query, name, req.user, top_k, search_type, embedder)) or "(nothing found)"

    def remember(text: str) -> str:
        """Queued only once remember would take it: a refusal is the model's ERROR, never "queued"."""
        note = {"dataset": name, "user": req.user, "items": [{"text": text, "name": "agent-note.txt"}]}
        try:
            RememberRequest.model_validate(note)
            with Store().unit_of_work() as uow:
                writable_dataset(uow, name, req.user, create=False)
        except (ValidationError, AccessDenied, UnknownDataset) as exc:
            raise ToolInvocationError(f"the note was not stored: {exc}") from None
        notes.append(note)
        return f"note queued for memory in dataset {name!r}"

    with usage.usage_scope() as spent:
        ports = AgenticPorts(
            gateway=gateway or gateway_from_settings(settings), registry=registry, grants=grants,
            memory=lambda q, k: context_items(q, name, req.user, k, AGENT_MEMORY.value, embedder),
            search=search, remember=remember, skills=skills, tools=[*stored_tools, *host_specs],
            limits=Limits(settings.agent_max_iterations, settings.agent_max_tokens, settings.agent_max_seconds),
            tokens_used=lambda: spent.prompt_tokens + spent.completion_tokens)
        result, outcome = agentic_recall(req, name, ports)
    if outcome is not None and outcome.skill_runs:
        user_id = ids.user_id(req.user)
        run_ids = []
        with Store().unit_of_work() as uow:
            for run in outcome.skill_runs:
                run_id = ids.skill_run_id(request_id, run.skill) if request_id else uuid.uuid4()
                run_ids.append(str(uow.agentic.add_run(dataset, user_id, run, run_id)))
        result.agent["skill_run_ids"] = run_ids
    for note in notes:  # after the recall's own reads: a note is new content for the dataset
        app.send_task("engram.remember", kwargs=note)
    return result


def recall_query(req: RecallRequest, *, embedder=None, gateway=None, request_id: str | None = None,
                 exact_scan: bool = False) -> RecallResult:
    """Library form of engram.recall (the task calls this). `embedder` / `gateway` override the
    configured ones; `exact_scan` bypasses the vector indexes (benchmarks compare against it)."""
    if is_agentic(req.search_type):
        return agentic_query(req, embedder=embedder, gateway=gateway, request_id=request_id)
    settings = get_settings()
    with Store().unit_of_work() as uow:
        scope = authorised_scope(uow, req)
        uow.search.exact = exact_scan
        uow.search.node_sets = list(req.node_sets)
        embedder = embedder or get_embedder(settings)
        ports = RecallPorts(
            search=uow.search, sessions=uow.sessions, llm_errors=(LLMError,),
            bm25=(settings.bm25_k1, settings.bm25_b),
            embedder=embedder, gateway=gateway or gateway_from_settings(settings),
            truth=truth.truth_hook(uow.learning.bases, lambda q: embedder.embed([q])[0]),
        )
        result = run_recall(req, scope, ports)
        attach_lessons(uow, result)
        entry = session_entry(req, scope, result)
        if entry is not None:
            uow.access.ensure_user(req.user)
            uow.sessions.add_entry(**entry, entry_id=entry_id(request_id))
    return result


def attach_lessons(uow: UnitOfWork, result: RecallResult) -> None:
    """Items from a distilled lesson's document carry the lesson's provenance (session, entries)."""
    items = [i for i in result.items if i.provenance.data_item_id is not None]
    found = uow.learning.lessons_by_items([i.provenance.data_item_id for i in items]) if items else {}
    for item in items:
        lesson = found.get(item.provenance.data_item_id)
        if lesson is not None:
            item.provenance.lesson = LessonProvenance(lesson_id=lesson["id"], session_id=lesson["session_id"],
                                                      entry_ids=list(lesson["member_entry_ids"]))


@engram_task("engram.recall", payload=RecallRequest)
def recall(self, req: RecallRequest) -> dict:
    return observed_recall(req.search_type, req.datasets,
                           lambda: recall_query(req, request_id=self.request.id).model_dump(mode="json"))
