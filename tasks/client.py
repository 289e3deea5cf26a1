"""A thin typed client for producers. Everything here is plain `send_task` underneath; a
producer that does not import Engram can send the same names and kwargs itself."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from celery import Celery

from engram.models.payloads import (
    CaptureAccepted,
    CaptureStatus,
    DatasetsResult,
    EntityDossier,
    ForgetResult,
    GraphResult,
    ImproveResult,
    LinkResult,
    ListResult,
    ReadResult,
    RecallResult,
    RememberResult,
    RunStatus,
    SessionStored,
    StatusRequest,
    StatusResult,
)
from engram.pipelines.errors import BadInput
from engram.tasks.client_files import EngramError, FileTransfer, items_from_paths
from engram.tasks.validation import InvalidPayload, parse_payload


def _default_app() -> Celery:
    from engram.celery_app import app

    return app


class RunHandle:
    def __init__(self, client: EngramClient, run_id: uuid.UUID, name: str | None = None, duplicate: bool = False,
                 user: str = "default"):
        self.client = client
        self.run_id = run_id
        self.user = user  # a run id is not a capability: status asks as this user
        self.name = name
        self.duplicate = duplicate

    def status(self) -> RunStatus:
        return self.client.run_status(self.run_id, user=self.user)

    def wait(self, timeout: float = 600.0, poll: float = 0.2,
             on_progress: Callable[[RunStatus], None] | None = None) -> RunStatus:
        """Block until the run ends (completed, partial, failed or forgotten); returns its status."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.status()
            if on_progress is not None:
                on_progress(current)
            if current.done:
                return current
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {self.run_id} still {current.status} after {timeout:.0f}s")
            time.sleep(poll)


class RememberHandle:
    def __init__(self, result: RememberResult, runs: list[RunHandle]):
        self.result = result
        self.runs = runs

    def wait(self, timeout: float = 600.0, **kw) -> list[RunStatus]:
        deadline = time.monotonic() + timeout
        return [run.wait(timeout=max(1.0, deadline - time.monotonic()), **kw) for run in self.runs]


class EngramClient(FileTransfer):
    """`local_reads=True` reads run status straight from Postgres (for processes that can reach
    it, like the CLI): a status poll then never waits in a queue behind the work it watches."""

    def __init__(self, app: Celery | None = None, timeout: float = 120.0, local_reads: bool = False):
        self.app = app or _default_app()
        self.timeout = timeout
        self.local_reads = local_reads

    def call(self, name: str, /, **kwargs) -> dict:
        result = self.app.send_task(name, kwargs=kwargs)
        try:
            return result.get(timeout=self.timeout, propagate=True)
        except Exception as exc:
            if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
                raise
            raise EngramError(f"{name}: {exc}") from exc
        finally:
            result.forget()

    # -------------------------------------------------------------- remember

    def remember(
        self,
        content: str | None = None,
        *,
        dataset: str,
        user: str = "default",
        items: list[dict] | None = None,
        paths: Iterable[str | Path] = (),
        create_dataset: bool = True,
        background: bool = True,
        node_sets: list[str] | None = None,
        options: dict | None = None,
        timeout: float = 600.0,
    ) -> RememberHandle | list[RunStatus]:
        """Remember text, items or files/directories. Background: a handle; blocking: terminal statuses."""
        all_items = list(items or [])
        if content is not None:
            all_items.insert(0, {"text": content})
        all_items.extend(items_from_paths(paths))
        payload = {"dataset": dataset, "user": user, "items": all_items, "create_dataset": create_dataset}
        if node_sets:
            payload["node_sets"] = node_sets
        if options:
            payload["options"] = options
        result = RememberResult.model_validate(self.call("engram.remember", **payload))
        handle = RememberHandle(result, [RunHandle(self, r.run_id, r.name, r.duplicate, user)
                                        for r in result.runs])
        return handle if background else handle.wait(timeout=timeout)

    # -------------------------------------------------------------- the rest

    def _status(self, **kwargs) -> StatusResult:
        if self.local_reads:
            from engram.tasks.status import status_result  # the store: a bare producer never imports it

            return _local(lambda: status_result(parse_payload("engram.status", StatusRequest, (), kwargs), self.app))
        return StatusResult.model_validate(self.call("engram.status", **kwargs))

    def run_status(self, run_id: uuid.UUID, user: str = "default") -> RunStatus:
        return self._status(run_id=str(run_id), user=user).runs[0]

    def dataset_status(self, dataset: str, user: str = "default", limit: int = 100) -> list[RunStatus]:
        return self._status(dataset=dataset, user=user, limit=limit).runs

    def dataset_overview(self, dataset: str, user: str = "default", limit: int = 100) -> StatusResult:
        """The dataset's runs and the messages waiting in each queue."""
        return self._status(dataset=dataset, user=user, limit=limit)

    def retry(self, run_id: uuid.UUID, user: str = "default") -> dict:
        """Resume a failed run at its first unfinished stage: {"run_id", "status", "stages"}."""
        return self.call("engram.cognify", run_id=str(run_id), user=user)

    def find_run(self, ref: str, user: str = "default") -> uuid.UUID:
        """A full run id from `ref`: the id itself, or a unique start of it among the user's runs
        (as the CLI shows them). Needs local_reads for a shortened id."""
        try:
            return uuid.UUID(ref)
        except ValueError:
            if not self.local_reads:
                raise EngramError(f"{ref!r} is not a full run id (a shortened one needs local_reads)") from None
        from engram.tasks.status import find_run

        return _local(find_run, ref, user)

    def find_items(self, dataset: str, user: str = "default", *, item: str | None = None,
                   document: str | None = None) -> list[dict]:
        """Local read: the dataset's items with id (or id start) `item`, or named `document`."""
        from engram.tasks.status import find_items

        return _local(find_items, dataset, user, item=item, document=document)

    def datasets(self, user: str = "default") -> DatasetsResult:
        """The datasets the user holds a grant on, with owner, grants and counts."""
        return DatasetsResult.model_validate(self.call("engram.datasets", user=user))

    def recall(self, question: str, *, datasets: list[str], user: str = "default", **kwargs) -> RecallResult:
        return RecallResult.model_validate(
            self.call("engram.recall", question=question, datasets=datasets, user=user, **kwargs))

    def forget(self, dataset: str, user: str = "default", data_item_id: uuid.UUID | None = None) -> ForgetResult:
        kwargs = {"dataset": dataset, "user": user}
        if data_item_id is not None:
            kwargs["data_item_id"] = str(data_item_id)
        return ForgetResult.model_validate(self.call("engram.forget", **kwargs))

    # -------------------------------------------------------------- browsing and linking

    def read(self, dataset: str, id: uuid.UUID | str, *, user: str = "default", **kwargs) -> ReadResult:
        """One captured object or document (kwargs: offset, max_chars, facts_limit)."""
        return ReadResult.model_validate(self.call("engram.read", dataset=dataset, id=str(id), user=user, **kwargs))

    def list_items(self, dataset: str, *, user: str = "default", **kwargs) -> ListResult:
        """A dataset's objects or documents, newest first (kwargs: kind, type, project, tag, offset, limit)."""
        return ListResult.model_validate(self.call("engram.list", dataset=dataset, user=user, **kwargs))

    def entity(self, dataset: str, entity: str, *, user: str = "default", **kwargs) -> EntityDossier:
        """An entity's (or object's) dossier by name or id (kwargs: limit)."""
        return EntityDossier.model_validate(self.call("engram.entity", dataset=dataset, entity=entity, user=user,
                                                      **kwargs))

    def graph(self, dataset: str, entity: str, *, user: str = "default", **kwargs) -> GraphResult:
        """An entity's neighbourhood (kwargs: depth, limit, include_history)."""
        return GraphResult.model_validate(self.call("engram.graph", dataset=dataset, entity=entity, user=user,
                                                    **kwargs))

    def link(self, dataset: str, source: str, target: str, predicate: str, *, user: str = "default",
             **kwargs) -> LinkResult:
        """A typed link, origin caller, between two entities or objects (kwargs: confidence, note)."""
        return LinkResult.model_validate(self.call("engram.link", dataset=dataset, source=str(source),
                                                   target=str(target), predicate=predicate, user=user, **kwargs))

    # -------------------------------------------------------------- sessions and improve

    def share(self, dataset: str, grantee: str, permissions: list[str] | None = None, *,
              user: str = "default") -> dict:
        """Grant `grantee` permissions (default read) on the dataset; needs the share grant."""
        return self.call("engram.share", dataset=dataset, user=user, grantee=grantee,
                         permissions=permissions or ["read"])

    def unshare(self, dataset: str, grantee: str, permissions: list[str] | None = None, *,
                user: str = "default") -> dict:
        """Revoke `grantee`'s permissions (default all) on the dataset."""
        return self.call("engram.unshare", dataset=dataset, user=user, grantee=grantee,
                         permissions=permissions or ["read", "write", "delete", "share"])

    def remember_turn(self, *, dataset: str, session_id: str, question: str = "", answer: str = "",
                      context: str = "", user: str = "default", create_dataset: bool = True,
                      source_chunk_ids: list | None = None, source_edge_ids: list | None = None,
                      at: datetime | str | None = None) -> SessionStored:
        """Store one session turn; returns at once with `session_stored` (improve follows separately).
        `at`: when it was said (default now); its relative phrases are dated from it."""
        payload = {"dataset": dataset, "user": user, "session_id": session_id, "question": question,
                   "answer": answer, "context": context, "create_dataset": create_dataset,
                   "source_chunk_ids": [str(i) for i in source_chunk_ids or []],
                   "source_edge_ids": [str(i) for i in source_edge_ids or []]}
        if at is not None:
            payload["at"] = at.isoformat() if isinstance(at, datetime) else at
        return SessionStored.model_validate(self.call("engram.remember", **payload))

    def feedback(self, entry_id: uuid.UUID | str, feedback: str, *, score: float | None = None,
                 user: str = "default") -> dict:
        """Mark a session entry helpful or harmful (optional score 0..1 = the entry's confidence)."""
        kwargs = {"entry_id": str(entry_id), "feedback": feedback, "user": user}
        if score is not None:
            kwargs["score"] = score
        return self.call("engram.feedback", **kwargs)

    def improve(self, dataset: str, *, session_ids: list[str] | None = None, user: str = "default",
                **budget) -> ImproveResult:
        """Explicit improve (never subject to admission): started, no_op or busy (rerun requested)."""
        return ImproveResult.model_validate(
            self.call("engram.improve", dataset=dataset, user=user, session_ids=session_ids or [], **budget))

    def improve_run(self, run_id: uuid.UUID | str, user: str = "default") -> dict:
        return self.call("engram.improve.run_status", run_id=str(run_id), user=user)

    def sessions(self, dataset: str, *, session_id: str | None = None, user: str = "default", runs: int = 5) -> dict:
        kwargs = {"dataset": dataset, "user": user, "runs": runs}
        if session_id is not None:
            kwargs["session_id"] = session_id
        return self.call("engram.sessions", **kwargs)

    # -------------------------------------------------------------- capture lane

    def capture(self, title: str, *, dataset: str, user: str = "default", wait: bool = False,
                timeout: float = 120.0, **fields) -> CaptureAccepted | CaptureStatus:
        """Capture a typed knowledge object (fields: content, type, project, tags, template,
        template_fields, summary, entities, properties, run_pipeline, create_dataset).
        wait=True blocks until its stages end and returns complete / partial."""
        fields.setdefault("create_dataset", True)
        accepted = CaptureAccepted.model_validate(
            self.call("engram.capture", title=title, dataset=dataset, user=user, **fields))
        return self.capture_status(accepted.object_id, accepted.run_id, timeout=timeout, user=user) if wait \
            else accepted

    def reprocess(self, object_id: uuid.UUID | str, *, dataset: str, user: str = "default", wait: bool = False,
                  timeout: float = 120.0) -> dict | CaptureStatus:
        """Resume a capture at its failed stage with the original request (or rerun it all)."""
        out = self.call("engram.capture.reprocess", object_id=str(object_id), dataset=dataset, user=user)
        return self.capture_status(uuid.UUID(out["object_id"]), uuid.UUID(out["run_id"]), timeout=timeout,
                                   user=user) if wait else out

    def capture_status(self, object_id: uuid.UUID, run_id: uuid.UUID | None, timeout: float = 120.0,
                       user: str = "default") -> CaptureStatus:
        if run_id is None:
            return CaptureStatus.of(object_id, None)
        return CaptureStatus.of(object_id, RunHandle(self, run_id, user=user).wait(timeout=timeout))


def _local(read: Callable, *args, **kwargs):
    """A local read, failing like a task does (EngramError with the reason)."""
    try:
        return read(*args, **kwargs)
    except (BadInput, InvalidPayload, LookupError, PermissionError) as exc:
        raise EngramError(str(exc)) from exc
