"""What a worker tells the rest of its fleet about itself, so a machine configured apart is
refused at start rather than splitting the fleet: which signing key (a fingerprint), which
Postgres and which lock Redis it uses. Every worker answers a remote-control command with it;
`engram worker` asks before it starts (docs/operations.md#past-one-machine).

A machine whose ENGRAM_SIGNING_KEY is unset makes a key of its own (every message between it
and the others is refused); one whose ENGRAM_DATABASE_URL is unset starts an embedded Postgres
of its own (accepts taken from the shared broker land in a database nobody else reads); one
naming another lock Redis elects its own beat and hands out its own improve claims.
"""

from __future__ import annotations

import hashlib
from engram.adapters.signing import fingerprint, signing_key
from engram.settings import get_settings

IDENTITY_COMMAND = "engram_fleet_identity"
ASPECTS = {
    "key": ("sign Engram's messages with another key", "set ENGRAM_SIGNING_KEY to the fleet's key"),
    "database": ("use another Postgres database", "set ENGRAM_DATABASE_URL to the fleet's database"),
    "redis": ("use another Redis for locks and results", "set ENGRAM_REDIS_URL to the fleet's Redis"),
}


def _digest(*parts) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:16]


def identity(settings) -> dict[str, str]:
    """This process's key fingerprint and the identities of the Postgres database and the Redis
    database it uses (the same servers through other addresses give the same identities)."""
    from sqlalchemy import text

    from engram.adapters.redis_client import get_redis
    from engram.adapters.store.engine import get_engine

    with get_engine(settings).connect() as conn:  # a server started at another moment is another server
        database = conn.execute(text(
            "SELECT current_database(), (SELECT oid FROM pg_database WHERE datname = current_database()),"
            " pg_postmaster_start_time()")).one()
    client = get_redis(settings)
    redis = (client.info("server").get("run_id"), client.connection_pool.connection_kwargs.get("db", 0))
    return {"key": fingerprint(signing_key(settings)), "database": _digest(*database), "redis": _digest(*redis)}


def register_identity_command() -> None:
    """Every worker answers IDENTITY_COMMAND with identity() (see disagreements)."""
    from celery.worker.control import control_command

    @control_command(name=IDENTITY_COMMAND)
    def _answer(state) -> dict:
        consumer = getattr(state, "consumer", None)
        task_consumer = getattr(consumer, "task_consumer", None)
        queues = sorted(q.name for q in getattr(task_consumer, "queues", None) or [])
        return {**identity(get_settings()), "queues": queues}


def disagreements(app, mine: dict[str, str], queues, timeout: float = 1.0) -> dict[str, list[str]]:
    """The running workers that serve any of `queues` (this fleet's) and differ from `mine`, by
    aspect (key, database, redis). A broadcast reaches every worker of the broker's vhost or Redis
    database: another deployment there with queues of its own is not this fleet."""
    replies = app.control.broadcast(IDENTITY_COMMAND, reply=True, timeout=timeout) or []
    out: dict[str, list[str]] = {}
    for reply in replies:
        for node, answer in reply.items():
            if not isinstance(answer, dict) or not set(answer.get("queues") or []) & set(queues):
                continue
            for aspect in ASPECTS:
                if answer.get(aspect) not in (None, mine[aspect]):
                    out.setdefault(aspect, []).append(node)
    return {aspect: sorted(nodes) for aspect, nodes in out.items()}
