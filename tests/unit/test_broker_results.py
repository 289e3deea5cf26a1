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


def test_purge_deletes_the_results_naming_removed_ids_or_a_forgotten_dataset():
    gone, kept = "9d3e1a77-aaaa-bbbb-cccc-ddddeeeeffff", "2b0c8f9e-1111-2222-3333-444455556666"
    capture = {"status": "SUCCESS", "result": {"object_id": gone.upper(), "run_id": kept}}
    other = {"status": "SUCCESS", "result": {"object_id": kept}, "kwargs": {"dataset": "kb"}}
    extended = {"status": "SUCCESS", "result": {"runs": 1},
                "kwargs": {"__type__": "bytes", "__value__": json.dumps({"dataset": "gone-kb"})}}
    recall = {"status": "SUCCESS", "result": {"items": []}, "kwargs": {"datasets": ["x", "gone-kb"]}}
    stored = [capture, other, extended, recall]
    redis = FakeRedis({f"celery-task-meta-{i}": json.dumps(v) for i, v in enumerate(stored)})
    assert purge_quoting(redis, [], ids=[gone]) == 1
    assert sorted(redis.values) == ["celery-task-meta-1", "celery-task-meta-2", "celery-task-meta-3"]
    assert purge_quoting(redis, [], datasets=["gone-kb"]) == 2
    assert sorted(redis.values) == ["celery-task-meta-1"]
