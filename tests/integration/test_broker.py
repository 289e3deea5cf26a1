"""Broker choice: RabbitMQ as the Celery broker (locks, rate limits and results stay on Redis)
runs the ingest and recall paths end to end."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

AMQP_URL = os.environ.get("ENGRAM_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def _reachable(url: str) -> bool:
    host_port = url.split("@")[-1].split("/")[0]
    host, _, port = host_port.partition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port or 5672)), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def rabbit_worker(spawn_worker):
    if not _reachable(AMQP_URL):
        pytest.skip(f"no RabbitMQ at {AMQP_URL} (set ENGRAM_TEST_AMQP_URL)")
    # Queues of their own: other test runs may share this RabbitMQ.
    tag = uuid.uuid4().hex[:8]
    env = {"ENGRAM_BROKER_URL": AMQP_URL,
           **{f"ENGRAM_QUEUE_{q.upper()}": f"{q}-{tag}" for q in ("ingest", "llm", "embed", "maintenance", "api")}}
    handle = spawn_worker(env, concurrency=2, name=f"rabbit-{tag}")
    assert handle.app.conf.broker_url.startswith("amqp://")
    yield handle
    handle.stop()
    with handle.app.connection_for_write() as conn:  # leave the shared broker as we found it
        channel = conn.channel()
        for queue in handle.app.conf.task_queues:
            queue.bind(channel).delete()


def test_ingest_and_recall_over_rabbitmq(rabbit_worker, dataset_name):
    client = rabbit_worker.client
    statuses = client.remember(dataset=dataset_name, background=False, items=[
        {"text": "Alice Moreau is the CEO of Harbor Dynamics. Harbor Dynamics is located in Port Alder."},
        {"text": "The Tessel River floods every spring near Port Alder."}])
    assert [s.status for s in statuses] == ["completed", "completed"], [s.error for s in statuses]
    answer = client.recall("Who is the CEO of Harbor Dynamics?", datasets=[dataset_name], search_type="CHUNKS")
    assert "Alice Moreau" in answer.items[0].text
    assert client.run_status(statuses[0].run_id).status == "completed"
