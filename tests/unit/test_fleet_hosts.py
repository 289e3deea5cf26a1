"""What a process on a machine of a multi-host fleet starts and keeps locally (docs/operations.md#past-one-machine)."""

import pytest

from engram.adapters import services
from engram.settings import Settings


def _settings(tmp_path, **kw) -> Settings:
    return Settings(_env_file=None, state_dir=tmp_path / "state", **kw)


@pytest.fixture
def no_embedded_postgres(monkeypatch):
    def refuse(_settings):
        raise AssertionError("an embedded Postgres was started")

    monkeypatch.setattr(services, "_embedded_postgres", refuse)


def test_a_producer_with_only_the_redis_url_starts_no_postgres_of_its_own(tmp_path, no_embedded_postgres):
    """A producer on another machine sets ENGRAM_REDIS_URL (as the README's Quick start says) and
    sends tasks through Engram's app or client: reading the broker URL must not start an embedded
    Postgres in its state directory (it did: a whole server, unused, on every producer host)."""
    from engram.celery_app import _connections

    s = _settings(tmp_path, redis_url="redis://queue.example:6379/3")
    assert services.resolve_redis(s) == "redis://queue.example:6379/3"
    conf = _connections(s)
    assert (conf["broker_url"], conf["result_backend"]) == ("redis://queue.example:6379/3",) * 2
    assert not (tmp_path / "state").exists()  # nothing of the embedded default was created


def test_another_broker_keeps_results_and_locks_on_the_configured_redis(tmp_path, no_embedded_postgres):
    from engram.celery_app import _connections

    s = _settings(tmp_path, redis_url="redis://locks.example:6379/0", broker_url="amqp://mq.example:5672//")
    conf = _connections(s)
    assert conf["broker_url"] == "amqp://mq.example:5672//"
    assert conf["result_backend"] == "redis://locks.example:6379/0"
    assert conf["broker_transport_options"] == {}  # a Redis visibility timeout means nothing to RabbitMQ


class _Control:
    def __init__(self, replies):
        self.replies = replies

    def broadcast(self, command, reply, timeout):
        assert (command, reply) == ("engram_fleet_identity", True)
        return self.replies


class _App:
    def __init__(self, replies):
        self.control = _Control(replies)


def test_a_new_worker_compares_itself_only_with_workers_of_its_own_queues():
    """A broadcast reaches every worker on the broker's vhost (or Redis database): another
    deployment there, on queues of its own, is not a fleet this worker would split."""
    from engram.adapters.fleet import disagreements

    mine = {"key": "k1", "database": "d1", "redis": "r1"}
    ours = ["celery", "embed", "ingest", "llm", "maintenance"]
    replies = [
        {"a@one": {"key": "k1", "database": "d1", "redis": "r1", "queues": ours}},
        {"b@two": {"key": "k2", "database": "d1", "redis": "r1", "queues": ["ingest"]}},
        {"c@three": {"key": "k1", "database": "d2", "redis": "r2", "queues": ours}},
        {"x@other": {"key": "k9", "database": "d9", "redis": "r9", "queues": ["ingest-3f2a", "celery-3f2a"]}},
        {"old@four": {"error": "unknown command"}},
    ]
    assert disagreements(_App(replies), mine, ours) == {"key": ["b@two"], "database": ["c@three"],
                                                        "redis": ["c@three"]}
    assert disagreements(_App(replies[:1] + replies[3:]), mine, ours) == {}
