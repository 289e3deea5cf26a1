"""engram.recall: authorise every dataset first, then recall through the pure pipeline.

Dataset rules: `user` defaults to "default"; named datasets are looked up as the user's own
first, then shared ones, and each must grant the user `read` (else UnknownDataset /
AccessDenied, never a silently empty answer). No datasets named means every dataset the
user may read; with a session_id and none readable, only the (empty) session lane runs.
"""

from __future__ import annotations

from engram.adapters.embed import get_embedder
from engram.adapters.llm.errors import LLMError
from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.store import Store, UnitOfWork
from engram.adapters.store.access import UnknownDataset
from engram.models.payloads import LessonProvenance, RecallRequest, RecallResult
from engram.pipelines import ids
from engram.pipelines.improve import truth
from engram.pipelines.recall.context import Scope
from engram.pipelines.recall.engine import RecallPorts, entry_id, run_recall, session_entry
from engram.settings import get_settings
from engram.tasks.base import engram_task


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


def recall_query(req: RecallRequest, *, embedder=None, gateway=None, request_id: str | None = None,
                 exact_scan: bool = False) -> RecallResult:
    """Library form of engram.recall (the task calls this). `embedder` / `gateway` override the
    configured ones; `exact_scan` bypasses the vector indexes (benchmarks compare against it)."""
    settings = get_settings()
    with Store().unit_of_work() as uow:
        scope = authorised_scope(uow, req)
        uow.search.exact = exact_scan
        uow.search.node_sets = list(req.node_sets)
        embedder = embedder or get_embedder(settings)
        ports = RecallPorts(
            search=uow.search, sessions=uow.sessions, llm_errors=(LLMError,),
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
    return recall_query(req, request_id=self.request.id).model_dump(mode="json")
