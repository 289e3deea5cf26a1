"""Embedding as a fleet service: content-addressed reuse plus cross-item micro-batches.

An item's texts are normalised and keyed by (model, dimension, sha256). Stored vectors are
reused; the rest become pending requests in Postgres, which batch tasks claim, oldest requests
first (half of the pending texts, within `batch_min`..`batch_max`), once that many wait or the
oldest waited `window_seconds`: texts trickling in one item at a time wait for company, since a
forward's cost is mostly reading the model's weights (one short text ~14 ms on one thread, 32
of them ~4 ms each), so claims of one item's ~60 texts cost ~20 % more per text than claims of
a few hundred. A batch task never sleeps out a window: it leaves and a wake-up is scheduled for
when the oldest text is due. An item task waiting for its own vectors does not wait for company
either: it claims at once (its worker would otherwise idle). A claim is embedded in like-length
forwards of one call and stored in the claim's transaction. Nothing is held in process memory:
a batch killed mid-way loses only its transaction, and its texts are claimed again by the next
batch.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from engram.pipelines.cognify.windows import windows_of
from engram.pipelines.errors import BadInput


class EmbeddingWaitTimeout(TimeoutError):
    """Vectors did not arrive in time (transient: the stage is retried)."""


class ItemForgotten(BadInput):
    """The item was forgotten before its vectors arrived (not retried)."""


class VectorsPending(Exception):
    """An item's texts are all in other batches' claims, none left to claim: rather than hold its
    worker idle, the stage may give it back and come again in `retry_in` seconds (the worker
    meanwhile runs the stages that queue more texts, or embeds them)."""

    def __init__(self, missing: int, retry_in: float, stats: EmbedStats | None = None):
        super().__init__(f"{missing} texts are being embedded by other batches; back in {retry_in:.1f}s")
        self.missing, self.retry_in = missing, retry_in
        self.stats = stats or EmbedStats()  # what this attempt embedded meanwhile (other items' texts too)


def texts_to_embed(chunk_rows: list[dict], draft: Any) -> list[tuple[uuid.UUID, str]]:
    """(row id, text) of everything an item's load stores a vector for."""
    keyed = [(c["id"], c["text"]) for c in chunk_rows]
    keyed += [(w.id, w.text) for w in windows_of(chunk_rows)]
    keyed += [(s.id, s.text) for s in draft.summaries]
    keyed += [(e.id, e.name) for e in draft.entities]
    keyed += [(t.id, t.name) for t in draft.entity_types]
    keyed += [(e.id, e.edge_text) for e in draft.edges]
    return keyed


def normalise(text: str) -> str:
    """The text that is embedded and keyed: Unicode NFC, whitespace runs collapsed, trimmed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def text_key(normalised: str) -> bytes:
    return hashlib.sha256(normalised.encode("utf-8")).digest()


@dataclass
class EmbedStats:
    texts: int = 0           # texts of this item
    unique: int = 0          # distinct normalised texts among them
    reused: int = 0          # already stored when the item asked
    batches: int = 0         # batches this task ran (for any items)
    embedded: int = 0        # texts those batches embedded
    seconds_embedding: float = 0.0
    seconds_waiting: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds_embedding"] = round(self.seconds_embedding, 3)
        out["seconds_waiting"] = round(self.seconds_waiting, 3)
        return out


@dataclass(frozen=True)
class BatchPolicy:
    batch_max: int = 512            # most texts one batch claims
    batch_min: int = 256            # a claim takes half of the pending texts, at least this many
    window_seconds: float = 0.5     # how long fewer than batch_min requests wait for company
    poll_seconds: float = 0.02
    drain_seconds: float = 5.0      # one batch task claims this long, then leaves the rest to the next
    timeout_seconds: float = 600.0  # give up waiting (the stage retries)
    give_way_seconds: float = 1.0   # an item whose texts other batches hold comes back after this
    give_way_check_seconds: float = 0.25  # while it waits, how often it asks whether to give way
    lock_timeout_seconds: float = 300.0  # a batch's transaction may sit idle this long


def request_vectors(texts: list[str], item: uuid.UUID, *, embeddings: Any, model: str, dimension: int) -> int:
    """Queue an item's texts for the fleet's batches as soon as they are known (no waiting).

    `embeddings` is the repository of the caller's transaction. Returns how many texts lack a vector.
    """
    by_key = {text_key(n): n for n in (normalise(t) for t in texts)}
    if not embeddings.reference(model, dimension, by_key, item):
        return 0
    return embeddings.request(model, dimension, by_key)  # stored ones are skipped there (no read-back)


def drain(store: Any, embedder: Any, policy: BatchPolicy, *,
          sleep: Callable[[float], None] = time.sleep,
          clock: Callable[[], float] = time.monotonic) -> tuple[EmbedStats, float | None]:
    """A batch task's body: run batches while some are due. Returns its stats and, when texts
    still wait inside their window, the seconds until the oldest is due: the caller schedules a
    wake-up then, and the worker does other work meanwhile instead of waiting for company."""
    stats, started = EmbedStats(), clock()
    while clock() - started < policy.drain_seconds:
        if run_batch(store, embedder, policy, stats, clock):
            continue
        with store.unit_of_work() as uow:
            due_in = uow.embeddings.ripens_in(embedder.name, embedder.dimension, policy.window_seconds)
        if due_in is None:
            return stats, None  # nothing left, or every pending text is in another batch already
        if due_in > policy.poll_seconds:
            return stats, due_in
        sleep(max(0.0, due_in))  # due in a moment: wait here
    return stats, 0.0


def vectors_for(texts: list[str], item: uuid.UUID, *, store: Any, embedder: Any, policy: BatchPolicy,
                give_way: Callable[[], bool] | None = None, sleep: Callable[[float], None] = time.sleep,
                clock: Callable[[], float] = time.monotonic) -> tuple[list[list[float]], EmbedStats]:
    """One vector per text (in order), embedding each distinct text at most once fleet-wide.

    `give_way`: asked when the texts still missing are all held by other batches (nothing left
    to claim); True (the caller's worker has other work waiting) raises VectorsPending instead
    of waiting for them."""
    model, dimension = embedder.name, embedder.dimension
    keys = [text_key(n) for n in (normalise(t) for t in texts)]
    by_key = {k: normalise(t) for k, t in zip(keys, texts)}
    stats = EmbedStats(texts=len(texts), unique=len(by_key))
    with store.unit_of_work() as uow:
        uow.embeddings.reference(model, dimension, by_key, item)
        found = uow.embeddings.lookup(model, dimension, list(by_key))
        missing = {k: t for k, t in by_key.items() if k not in found}
        uow.embeddings.request(model, dimension, missing)
    stats.reused = len(found)
    started = last_renewal = clock()
    last_asked = float("-inf")
    # This item waits for its texts: they are due now (no window), and its worker embeds them
    # (with the oldest others, up to a claim) rather than sit idle waiting for company.
    due_now = replace(policy, window_seconds=0.0)
    while missing:
        if clock() - started > policy.timeout_seconds:
            raise EmbeddingWaitTimeout(f"{len(missing)} texts still without vectors after {policy.timeout_seconds}s")
        ran = run_batch(store, embedder, due_now, stats, clock)
        with store.unit_of_work() as uow:
            found.update(uow.embeddings.lookup(model, dimension, list(missing)))
            missing = {k: t for k, t in missing.items() if k not in found}
            if missing and clock() - last_renewal > 1.0:
                # A request dropped meanwhile (its other items forgotten) is asked for again.
                if not uow.embeddings.reference(model, dimension, missing, item):
                    raise ItemForgotten(f"data item {item} was forgotten while its vectors were pending")
                uow.embeddings.request(model, dimension, missing)
                last_renewal = clock()
        if missing and not ran:
            # Our texts are in another task's batch: give the worker back, or wait for it.
            if give_way is not None and clock() - last_asked >= policy.give_way_check_seconds:
                last_asked = clock()
                if give_way():
                    raise VectorsPending(len(missing), policy.give_way_seconds, stats)
            sleep(policy.poll_seconds)
    stats.seconds_waiting = max(0.0, clock() - started - stats.seconds_embedding)
    return [found[k] for k in keys], stats


def claim_size(pending: int, policy: BatchPolicy) -> int:
    """How many texts the next claim takes: half of those pending (a backlog makes big, cheap
    forwards, and another process can take the other half, so neither ends holding a long tail
    alone), never fewer than `batch_min` nor more than `batch_max`."""
    return min(policy.batch_max, max(policy.batch_min, -(-pending // 2)))


def run_batch(store: Any, embedder: Any, policy: BatchPolicy, stats: EmbedStats,
              clock: Callable[[], float] = time.monotonic) -> int:
    """Claim, embed and store one batch of pending texts (any items'); 0 if none was due."""
    model, dimension = embedder.name, embedder.dimension
    with store.unit_of_work() as uow:
        limit = claim_size(uow.embeddings.pending(model, dimension), policy)
        claimed = uow.embeddings.claim(model, dimension, limit, policy.window_seconds, policy.lock_timeout_seconds)
        if not claimed:
            return 0
        started = clock()
        vectors = embedder.embed([t for _, t in claimed])
        for vector in vectors:
            if len(vector) != dimension:
                raise ValueError(f"{model} returned a {len(vector)}-d vector, expected {dimension}")
        uow.embeddings.store(model, dimension, {h: v for (h, _), v in zip(claimed, vectors)})
        stats.seconds_embedding += clock() - started
    stats.batches += 1
    stats.embedded += len(claimed)
    return len(claimed)
