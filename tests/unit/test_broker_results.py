"""Publish retries wait out a broker outage; forget's purge finds forgotten text in stored results."""

from __future__ import annotations

import base64
import fnmatch
import json

from engram.adapters.broker import publish_retry_policy
from engram.adapters.results import purge_quoting


def _waits(policy: dict) -> float:
    total, interval = 0.0, policy["interval_start"]
    for _ in range(policy["max_retries"]):
        total += interval
        interval = min(policy["interval_max"], interval + policy["interval_step"])
    return total


def test_publishes_wait_out_the_configured_outage_and_no_longer():
    for outage in (5, 60, 300):
        policy = publish_retry_policy(outage)
        assert outage <= _waits(policy) <= outage + policy["interval_max"]


class FakeRedis:
    def __init__(self, values: dict[str, str]):
        self.values = dict(values)

    def scan_iter(self, match: str, count: int, _type: str):
        return [k for k in list(self.values) if fnmatch.fnmatch(k, match)]

    def mget(self, keys):
        return [self.values.get(k) for k in keys]

    def delete(self, *keys):
        return sum(self.values.pop(k, None) is not None for k in keys)


def test_purge_deletes_exactly_the_results_quoting_forgotten_text():
    chunk = "Quorvath Lindqvist founded Zephyrine Mills in 1987."
    recall = {"status": "SUCCESS", "result": {"items": [{"kind": "chunk", "text": chunk, "score": 0.9}]}}
    # An extended result: the payload is JSON inside the JSON (kombu's bytes wrapper).
    kwargs = json.dumps({"dataset": "kb", "items": [{"text": "Intro.\n" + chunk.upper()}]})
    accept = {"status": "SUCCESS", "result": {"status": "accepted"},
              "kwargs": {"__type__": "bytes", "__value__": kwargs}}
    other = {"status": "SUCCESS", "result": {"items": [{"text": "Kestrelmoor Ferries runs the Oxbridle line."}]}}
    redis = FakeRedis({"celery-task-meta-1": json.dumps(recall), "celery-task-meta-2": json.dumps(accept),
                       "celery-task-meta-3": json.dumps(other), "engram:lock": base64.b64encode(b"x").decode(),
                       "celery-task-meta-4": "not json " + chunk})
    assert purge_quoting(redis, [chunk, "Zephyrine Mills", "Al", ""]) == 3
    assert sorted(redis.values) == ["celery-task-meta-3", "engram:lock"]
    assert purge_quoting(redis, []) == 0


def _deliveries(backlog: dict[str, int], take: int) -> list[str]:
    """The queues a worker's Redis connection takes `take` messages from, in order: each BRPOP
    names the queues in the cycle's order and pops the first non-empty one."""
    from kombu.utils.scheduling import cycle_by_name

    from engram.adapters.broker import QUEUE_ORDER

    cycle = cycle_by_name(QUEUE_ORDER)()
    cycle.update(["ingest", "llm", "embed", "maintenance", "celery"])  # a worker's --queues
    left, out = dict(backlog), []
    for _ in range(take):
        queue = next(q for q in cycle.consume(5) if left.get(q))
        left[queue] -= 1
        out.append(queue)
        cycle.rotate(queue)
    return out


def test_a_worker_takes_accepts_and_chunking_before_an_embedding_backlog():
    taken = _deliveries({"embed": 30, "maintenance": 2, "ingest": 6, "celery": 2}, 12)
    assert taken[:8] == ["celery"] * 2 + ["ingest"] * 6
    # The heavy queues still share round robin among themselves.
    assert taken[8:12] == ["embed", "maintenance", "embed", "maintenance"]


def test_a_flood_of_light_messages_never_starves_the_stages_that_finish_items():
    taken = _deliveries({"ingest": 1000, "embed": 50}, 170)
    assert taken.count("embed") == 10
    gaps = [i for i, q in enumerate(taken) if q == "embed"]
    assert all(b - a == 17 for a, b in zip(gaps, gaps[1:]))
