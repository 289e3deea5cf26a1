"""What every recall lane is handed: the question, its authorised scope and the ports.

Ports are duck-typed: `search` is the SearchRepository interface, `embedder` has
`embed(texts)`, `gateway` has `generates`, `complete(messages)`. Lanes never see SQL or Celery.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from engram.models.payloads import Provenance
from engram.models.search import EdgeWindow

# Embeds questions in the background while recall's first reads run: one pool per process (a
# forked child inherits the parent's pool object but not its threads), its threads started on
# first use.
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _embed_one(embedder: Any, text: str) -> list[float]:
    return list(embedder.embed([text])[0])


def _embedding_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=2, thread_name_prefix="engram-query-embedding"))
        return _pool[1]

# Per-chunk truth scores in [0, 1] for a question (given the question, the rows and, optionally, a
# callable returning the question's vector); None or missing ids are neutral (1.0 factor).
TruthHook = Callable[..., Mapping[uuid.UUID, float]]


@dataclass
class Scope:
    """Datasets the user may read (already authorised), with their names for provenance."""

    datasets: list[uuid.UUID]
    names: dict[uuid.UUID, str]
    user_id: uuid.UUID | None = None
    # Of those, the ones the user may also write: a recall's session entry goes only there.
    writable: frozenset[uuid.UUID] = frozenset()

    def name(self, dataset: uuid.UUID | None) -> str | None:
        return self.names.get(dataset) if dataset is not None else None


@dataclass
class RecallContext:
    question: str
    top_k: int
    scope: Scope
    search: Any
    embedder: Any
    window: EdgeWindow = field(default_factory=EdgeWindow)
    truth: TruthHook | None = None
    weights: Mapping[str, float] = field(default_factory=dict)  # the search type's fusion weights
    bm25: tuple[float, float] = (1.5, 0.75)  # (k1, b)
    _vectors: dict[str, list[float]] = field(default_factory=dict, repr=False)
    _pending: dict[str, Future] = field(default_factory=dict, repr=False)
    _lists: dict[tuple, Any] = field(default_factory=dict, repr=False)  # ranked lists computed once
    _rows: dict[uuid.UUID, dict] = field(default_factory=dict, repr=False)  # chunk rows read, by id
    filters: dict[str, Any] = field(default_factory=dict)  # CAPTURES: types, project, tags

    @property
    def datasets(self) -> list[uuid.UUID]:
        return self.scope.datasets

    def vector(self, query: str | None = None) -> list[float]:
        """The embedding of the question (or another query), computed once."""
        query = self.question if query is None else query
        if query not in self._vectors:
            pending = self._pending.pop(query, None)
            self._vectors[query] = pending.result() if pending is not None else _embed_one(self.embedder, query)
        return self._vectors[query]

    def prefetch_vector(self) -> None:
        """Start embedding the question in the background: the SQL reads that do not need its
        vector (BM25, the question's names in the graph) run meanwhile (the model releases the GIL)."""
        if self.question not in self._vectors and self.question not in self._pending:
            self._pending[self.question] = _embedding_pool().submit(_embed_one, self.embedder, self.question)

    def with_question(self, question: str) -> RecallContext:
        """The same scope and ports for another query (follow-ups, fallbacks)."""
        return RecallContext(question, self.top_k, self.scope, self.search, self.embedder, self.window,
                             self.truth, self.weights, self.bm25, self._vectors, self._pending, _rows=self._rows,
                             filters=self.filters)

    def cached(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """A ranked list (or other read) computed once per recall."""
        key = (self.question, *key)
        if key not in self._lists:
            self._lists[key] = compute()
        return self._lists[key]

    def keep_rows(self, rows: list[dict]) -> list[dict]:
        """Remember chunk rows a ranked list read (by id), so chunk_rows does not read them again."""
        for row in rows:
            self._rows.setdefault(row["id"], row)
        return rows

    def chunk_rows(self, chunk_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict]:
        """Chunk rows by id, each read from the store at most once per recall: the ones a ranked
        list (or an earlier call) already read are not read again; unknown ids are left out."""
        missing = [cid for cid in dict.fromkeys(chunk_ids) if cid not in self._rows]
        if missing:
            self._rows.update(self.search.chunks_by_ids(missing))
        return {cid: self._rows[cid] for cid in chunk_ids if cid in self._rows}

    def chunk_provenance(self, row: Mapping[str, Any]) -> Provenance:
        return Provenance(
            dataset=self.scope.name(row.get("dataset_id")),
            document_id=row.get("document_id"),
            data_item_id=row.get("data_item_id"),
            title=row.get("title"),
            chunk_ids=[row["chunk_id"] if "chunk_id" in row else row["id"]],
            occurred_at=row.get("occurred_at"),
            speakers=row.get("speakers"),
        )


def similarity(distance: float | None) -> float:
    """Cosine distance → similarity in [-1, 1]; a missing vector counts as 0."""
    return 0.0 if distance is None else round(1.0 - float(distance), 6)
