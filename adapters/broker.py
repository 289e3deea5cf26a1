"""Riding out a broker restart: publishes wait for the broker, and a worker gives back at once
the messages it dropped with the lost connection.

Publishing: Celery's default publish retry gives up after about 0.6 s, so a stage finishing
while Redis restarts could not publish its chain's next link (or its own retry) and the run
stalled until the abandoned-run sweep. Every publish of Engram's app (accepts, next links,
retries) now waits out an outage of up to ENGRAM_BROKER_OUTAGE_SECONDS.

Consuming: when the broker connection is lost, Celery drops the messages the worker held but
had not started (prefetched, and ETA/countdown retries), expecting the broker to redeliver
them. RabbitMQ does at once; the Redis transport keeps them in its `unacked` hash until the
visibility timeout (2 x the longest task: an hour by default). The worker notes their
delivery tags and puts them back on their queues as soon as it has reconnected.

Reading queue depths (run status, metrics, the embed give-way hint) is done here too: only
adapters/ speak kombu.
"""

from __future__ import annotations

import logging

from collections.abc import Iterable

from celery.worker import state
from celery.worker.consumer import Consumer as CeleryConsumer
from kombu.exceptions import ChannelError

log = logging.getLogger("engram.broker")


def publish_retry_policy(outage_seconds: float) -> dict:
    """kombu's retry policy for publishes that waits out `outage_seconds` of broker downtime."""
    start, step, ceiling = 0.2, 0.5, 2.0
    waited, interval, retries = 0.0, start, 0
    while waited < outage_seconds:
        waited += interval
        interval = min(ceiling, interval + step)
        retries += 1
    return {"max_retries": retries, "interval_start": start, "interval_step": step, "interval_max": ceiling}


def queue_depth(channel, queue: str) -> int:
    """Messages waiting in `queue` (not those a worker holds), by a passive declare (any broker)."""
    try:
        return channel.queue_declare(queue=queue, passive=True).message_count
    except ChannelError:  # never declared, or Redis keeps no key for an empty list: none waiting
        return 0


def queue_depths(app, queues: Iterable[str]) -> dict[str, int]:
    """Each queue's depth, through the broker itself."""
    depths = {}
    with app.connection_for_read() as conn:
        for name in queues:
            channel = conn.channel()  # a failed passive declare may close an AMQP channel
            try:
                depths[name] = queue_depth(channel, name)
            finally:
                channel.close()
    return depths


def any_waiting(app, queues: Iterable[str], timeout: float = 2.0) -> bool:
    """Whether any of `queues` holds a message, on a pooled connection (raises when the broker
    cannot be reached within `timeout`)."""
    with app.pool.acquire(block=True, timeout=timeout) as conn:
        return any(queue_depth(conn.default_channel, q) > 0 for q in queues)


def restore_dropped(app, tags: list[str]) -> list[str]:
    """Put the messages of `tags` back on their queues (Redis broker); returns the tags still to do."""
    if not tags:
        return []
    try:
        with app.connection_for_write() as conn:
            channel = conn.channel()
            try:
                for tag in tags:
                    # A no-op when the tag is gone (acked meanwhile, or already restored).
                    channel.qos.restore_by_tag(tag)
            finally:
                channel.close()
    except Exception:  # the broker flapped again: the next reconnect tries once more
        log.warning("could not restore %d dropped messages yet", len(tags), exc_info=True)
        return tags
    log.warning("restored %d messages dropped with the lost broker connection", len(tags))
    return []


class Consumer(CeleryConsumer):
    """Celery's consumer, restoring the messages it drops on a lost connection (see module doc)."""

    _dropped: list[str] | None = None

    def on_close(self):
        held = set(state.reserved_requests) | set(state.scheduled_requests)
        tags = [getattr(r.message, "delivery_tag", None) for r in held if r not in state.active_requests]
        self._dropped = list(dict.fromkeys([*(self._dropped or []), *(t for t in tags if t)]))
        super().on_close()

    def connect(self):
        conn = super().connect()
        if getattr(conn.transport, "driver_type", "") != "redis":
            self._dropped = None  # AMQP requeues a closed channel's unacked messages itself
        elif self._dropped:
            self._dropped = restore_dropped(self.app, self._dropped)
        return conn
