"""The embed queue's batch task: embeds pending texts of any items (pipelines/cognify/embedding).

Chunking (the chunks' texts) and extraction (the rest) queue an item's texts as soon as they
are known and schedule one batch task (at most one waiting at a time); batch tasks drain the
pending texts in length-sorted micro-batches, so by the time an item's embed_and_load runs its
vectors are usually stored. A batch task killed mid-way is redelivered (acks_late); its texts
are claimable again as soon as its connection goes.
"""

from __future__ import annotations

import logging

from engram.adapters import broker, metrics
from engram.adapters.embed import get_embedder
from engram.adapters.redis_client import best_effort
from engram.adapters.store import Store
from engram.pipelines.cognify.embedding import BatchPolicy, drain
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.celery_app import app

log = logging.getLogger("engram.embedding")

QUEUED_KEY = "engram:embed:batch-queued"
EMBEDDED_KEY = "engram:embed:texts-embedded:"  # + model: texts the fleet's batches embedded


def embed_policy(settings) -> BatchPolicy:
    return BatchPolicy(batch_max=settings.embed_batch_max, batch_min=settings.embed_batch_min,
                       window_seconds=settings.embed_batch_window_seconds,
                       drain_seconds=settings.embed_drain_seconds,
                       timeout_seconds=settings.embed_wait_timeout_seconds,
                       give_way_seconds=settings.embed_give_way_seconds,
                       lock_timeout_seconds=max(60.0, settings.longest_task_seconds / 2))


def count_embedded(model: str, n: int, reused: int = 0) -> None:
    """A statistic (benchmarks and metrics read it): an unreachable Redis skips it, never fails
    the stage whose vectors are already stored. `reused`: texts whose vector was stored already."""
    metrics.count_embedding(model, embedded=n, reused=reused)
    if n:
        best_effort(lambda r: r.incrby(EMBEDDED_KEY + model, n), f"counting {n} embedded texts")


def schedule_batch(countdown: float = 0.0) -> None:
    """Send a batch task (in `countdown` seconds) unless one is already waiting. Only a wake-up:
    items waiting for vectors serve the queue themselves, so an unreachable Redis skips it."""
    flag_ms = 2000 + int(countdown * 1000)  # outlives the wait: a lost wake-up is sent again after it
    if best_effort(lambda r: r.set(QUEUED_KEY, "1", nx=True, px=flag_ms), "scheduling an embed batch"):
        app.send_task("engram.embed.batch", countdown=countdown or None)


def work_waiting(settings, queues: list[str] | None = None) -> bool:
    """Whether a stage that makes texts to embed waits in a queue this worker consumes (every
    queue but embed's; any broker: a passive declare reports a queue's depth). A load waiting
    for vectors gives its worker back only then: with nothing queued it would idle anyway, and
    other loads or batches queued behind it would mostly wait on the same batches."""
    if queues is None:  # a worker's: the queues it was started on
        queues = list(getattr(app.amqp.queues, "consume_from", None) or {}) or list(settings.pipeline_queues)
    queues = [q for q in queues if q != settings.queue_embed]
    try:
        return broker.any_waiting(app, queues, timeout=2)
    except Exception:  # noqa: BLE001 - a hint: an unreachable broker means wait here, as before
        log.debug("could not read queue depths; waiting for vectors in place", exc_info=True)
        return False


@engram_task("engram.embed.batch")
def embed_batch(self) -> dict:
    settings = get_settings()
    # Texts queued from now on get another batch task (the flag expires by itself in 2 s).
    best_effort(lambda r: r.delete(QUEUED_KEY), "clearing the batch-queued flag")
    embedder = get_embedder(settings)
    stats, due_in = drain(Store(), embedder, embed_policy(settings))
    count_embedded(embedder.name, stats.embedded)
    if due_in is not None:  # texts still wait (inside their window, or this task's time ran out)
        schedule_batch(countdown=max(0.0, due_in))
    return stats.as_dict()
