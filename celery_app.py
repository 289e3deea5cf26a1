"""The Celery app: Redis broker and results, a queue per domain, explicit routes, JSON only."""

from __future__ import annotations

import gc
import os

from celery import Celery
from celery.signals import worker_init, worker_process_init
from kombu import Exchange, Queue

from engram.adapters import embed, tracing
from engram.adapters.broker import publish_retry_policy
from engram.adapters.services import resolve_redis
from engram.settings import get_settings
from engram.pipelines.flow import all_stages
from engram.pipelines.flows import FLOWS
from engram.pipelines.improve.registry import UnknownStage, check_config as check_improve
from engram.beat_schedule import beat_schedule

TASK_MODULES = [
    "engram.tasks.cognify",
    "engram.tasks.embedding",
    "engram.tasks.recall",
    "engram.tasks.run_sweeps",
    "engram.tasks.sessions",
    "engram.tasks.improve",
    "engram.tasks.improve_sweeps",
    "engram.tasks.improve_distill",
    "engram.tasks.maintenance",
    "engram.tasks.sharing",
    "engram.tasks.capture",
    "engram.tasks.agentic",
    "engram.tasks.browse",
    "engram.tasks.export",
    "engram.tasks.engine",  # every declared stage's task (pipelines/flows.py)
]


# Public producer tasks: served from the api queue (Celery's default queue unless configured),
# so a bare producer's send_task reaches them and no stage work can hold them up.
PUBLIC_TASKS = [
    "engram.remember",
    "engram.cognify",
    "engram.forget",
    "engram.status",
    "engram.recall",
    "engram.feedback",
    "engram.sessions",
    "engram.improve",
    "engram.improve.run_status",
    "engram.maintenance.check_contradictions",
    "engram.maintenance.supersede",
    "engram.share",
    "engram.unshare",
    "engram.datasets",
    "engram.capture",
    "engram.capture.reprocess",
    "engram.read",
    "engram.list",
    "engram.entity",
    "engram.graph",
    "engram.link",
    "engram.agent.memory",
    "engram.agent.trace",
    "engram.skills.apply",
    "engram.skills.define",
    "engram.skills.define_tool",
    "engram.skills.feedback",
    "engram.skills.improve",
    "engram.skills.list",
    "engram.export",
    "engram.import",
]

# Public tasks whose results quote memory (answers, agent memory, session turns) or name what
# was forgotten: kept in the result backend ENGRAM_SHORT_RESULT_TTL_SECONDS, not result_expires.
SHORT_LIVED_RESULTS = frozenset({"engram.recall", "engram.agent.memory", "engram.sessions", "engram.forget"})


def public_routes(s) -> dict:
    return {name: {"queue": s.queue_api} for name in PUBLIC_TASKS}


def stage_routes(s) -> dict:
    """Each declared stage's task goes to its declared queue (pipelines/flows.py)."""
    queues = {"ingest": s.queue_ingest, "llm": s.queue_llm, "embed": s.queue_embed,
              "maintenance": s.queue_maintenance}
    return {name: {"queue": queues[stage.queue]} for name, stage in all_stages(FLOWS).items()}


def _routes(s) -> dict:
    return {
        **stage_routes(s),
        "engram.embed.batch": {"queue": s.queue_embed},
        "engram.cognify.finish_dataset": {"queue": s.queue_ingest},
        # An accept's runs are expanded into their chains by the pipeline fleet: the api worker
        # publishes one message per accept, whatever its size.
        "engram.cognify.start": {"queue": s.queue_ingest},
        "engram.maintenance.*": {"queue": s.queue_maintenance},
        # Improve requests are quick claim attempts; the stages are the work. Separate queues
        # keep a burst of requests from starving the holder's next stage (and its lease).
        "engram.improve.start": {"queue": s.queue_ingest},
        # Distillation lanes are LLM calls: the llm queue (its own thread pool in production).
        "engram.improve.distill.curate": {"queue": s.queue_llm},
        "engram.improve.distill.write": {"queue": s.queue_llm},
        "engram.improve.*": {"queue": s.queue_maintenance},
        # Skill views, definitions and agent memory are short reads/writes; drafting a
        # procedure is an LLM call.
        "engram.skills.*": {"queue": s.queue_api},
        "engram.agent.*": {"queue": s.queue_api},
        **public_routes(s),  # exact names: they win over the patterns above
        "engram.skills.improve": {"queue": s.queue_llm},  # an LLM call, sent through Engram's app
    }


def check_config(s) -> None:
    """Settings that name parts of Engram must name real ones: every process refuses to start otherwise."""
    try:
        check_improve(s.improve_disabled, s.improve_opt_in)
    except UnknownStage as exc:
        raise ValueError(f"ENGRAM_IMPROVE_DISABLED_STAGES / ENGRAM_IMPROVE_OPT_IN_STAGES: {exc}") from None
    if s.embedding_model.startswith("local:"):
        try:
            embed.local_model(s.embedding_model.removeprefix("local:"))
        except embed.EmbedderError as exc:
            raise ValueError(str(exc)) from None


def _connections(s) -> dict:
    """Broker and result backend: resolved (the embedded Redis started) when the app first reads
    its configuration, i.e. when a process connects, never at import."""
    redis_url = resolve_redis(s)  # Redis only: a producer's process never needs Postgres
    broker = s.broker_url or redis_url
    return {
        "broker_url": broker,
        "result_backend": redis_url,
        # Redis redelivers unacked messages after the visibility timeout (RabbitMQ when the channel closes).
        "broker_transport_options": {"visibility_timeout": s.visibility_timeout} if broker.startswith("redis") else {},
    }


def create_app() -> Celery:
    s = get_settings()
    check_config(s)
    # SigningAMQP: every message this app publishes carries Engram's HMAC (internal tasks check it).
    app = Celery("engram", include=TASK_MODULES, amqp="engram.adapters.signing:SigningAMQP")
    app.add_defaults(lambda: _connections(s))
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        # One direct exchange and routing key per queue: a route names exactly one queue.
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in s.queues],
        task_default_exchange=s.queue_ingest,
        task_default_routing_key=s.queue_ingest,
        task_default_queue=s.queue_ingest,
        task_routes=_routes(s),
        # Stages are idempotent (deterministic ids + upserts): a redelivery is harmless,
        # while a message lost with a killed worker would lose accepted work.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        result_backend_transport_options={"visibility_timeout": s.visibility_timeout},
        task_time_limit=s.longest_task_seconds,
        task_soft_time_limit=s.longest_task_seconds - 30,
        result_expires=7 * 24 * 3600,
        result_extended=True,
        task_track_started=True,
        worker_send_task_events=True,
        task_send_sent_event=True,
        broker_connection_retry_on_startup=True,
        # A broker restart: publishes (accepts, next chain links, retries) wait for it to come
        # back, and workers give back at once what they held (adapters/broker).
        task_publish_retry_policy=publish_retry_policy(s.broker_outage_seconds),
        worker_consumer="engram.adapters.broker:Consumer",
        worker_hijack_root_logger=False,
        timezone="UTC",
        enable_utc=True,
    )
    app.conf.beat_schedule = beat_schedule(s)
    # Exactly one beat schedules: the others hold off while it owns a Redis lock.
    app.conf.beat_scheduler = "engram.adapters.beat:SingleBeatScheduler"
    return app


app = create_app()

# Workers answer which signing key, database and Redis they use, so a new one can tell it differs.
from engram.adapters.fleet import register_identity_command  # noqa: E402

register_identity_command()


@worker_process_init.connect
def _fresh_connections_after_fork(**_kwargs) -> None:
    # Pooled connections must never be shared across a fork.
    from engram.adapters.redis_client import reset_redis
    from engram.adapters.store.engine import dispose_engine

    dispose_engine()
    reset_redis()
    embed.after_fork()


@worker_init.connect
def _traces(**_kwargs) -> None:
    # Off unless ENGRAM_OTLP_ENDPOINT is set; a pool forked after this keeps it (adapters/tracing).
    tracing.configure(get_settings())


@worker_init.connect
def _preload_embedder(sender=None, **_kwargs) -> None:
    # Load the local model once in the worker's main process, before the pool forks: the pool
    # processes share its pages copy-on-write and the first task pays no model load.
    settings = get_settings()
    consumed = set(getattr(sender.app.amqp.queues, "consume_from", None) or settings.queues)
    if not (settings.embed_preload and settings.embedding_model.startswith("local:")
            and consumed & {settings.queue_embed, settings.queue_recall}):
        return
    pool = str(getattr(sender, "pool_cls", "prefork")).lower()
    concurrency = sender.concurrency if isinstance(sender.concurrency, int) else 1
    forks = "prefork" in pool or "processes" in pool
    embed.set_process_share(concurrency if forks else 1)
    embedder = embed.get_embedder(settings)
    embedder.preload()
    if forks:  # the pool's collections must not write to (and so copy) what it shares with us
        gc.collect()
        gc.freeze()
    if not forks and settings.queue_embed in consumed:  # threads/solo: batches here, on every core it owns
        embed.set_torch_threads(embed.torch_threads(1))
    elif not forks:
        # Only queries (one short question each): one torch thread. Two threads cost 3-5x a
        # query's latency whenever the other core is busy (each OpenMP region waits for it).
        embed.set_torch_threads(int(os.environ.get("ENGRAM_TORCH_THREADS") or 1))
