"""Engram settings: every knob is an ENGRAM_* environment variable (or a .env file)."""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from pathlib import Path

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from engram.models.vector_index import EF_CONSTRUCTION_MAX, M_MAX, M_MIN, check_build_memory, check_build_params


def size_mb(value: str) -> int | None:
    """Megabytes of a size written like 512MB or 4GB; None for anything else."""
    match = re.fullmatch(r"(\d+)([MG])B", value)
    return int(match[1]) * (1024 if match[2] == "G" else 1) if match else None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_", env_file=".env", extra="ignore")

    # --- services: unset means "start the embedded server in state_dir" ---
    database_url: str | None = Field(
        default=None, description="postgresql:// URL of Postgres 15+ with pgvector; unset = embedded"
    )
    redis_url: str | None = Field(default=None, description="redis:// URL of Redis 6+; unset = embedded")
    broker_url: str | None = Field(
        default=None, description="Celery broker (e.g. amqp:// RabbitMQ); unset = the Redis above. Locks, rate "
        "limits and results stay on Redis")
    signing_key: str | None = Field(
        default=None, description="HMAC key of Engram's own messages (internal tasks refuse others); unset = one "
        "generated in state_dir. Every process of a fleet needs the same key")
    state_dir: Path = Field(default=Path("~/.engram"), description="embedded servers' data and sockets")
    embedded_shared_buffers: str = Field(
        default="auto", description="shared_buffers of the embedded Postgres (512MB, 4GB); auto = a quarter of "
        "the machine's memory, 128MB to 8GB. Applied when the server starts (docs/operations.md)")
    database_name: str = "engram"

    # --- LLM: unset = the deterministic offline extractor; "replay:<path>" = cassette ---
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_api_base: str | None = None
    llm_max_reasks: int = Field(default=2, ge=0, le=10)
    llm_timeout_seconds: float = 120.0
    llm_requests_per_minute: int = Field(default=0, ge=0, description="fleet-wide; 0 = unlimited")
    llm_tokens_per_minute: int = Field(default=0, ge=0, description="fleet-wide; 0 = unlimited")
    extraction_mode: str = Field(default="single", description="single (one call per chunk) | two_call")

    # --- embeddings ---
    embedding_model: str = Field(
        default="local:all-MiniLM-L6-v2", description="local:<name> or any litellm embedding model"
    )
    embedding_dimension: int = Field(default=384, gt=0)
    embedding_batch_size: int = Field(default=64, gt=0)
    embedding_max_tokens: int | None = Field(
        default=None, gt=0, description="a litellm embedding model's input limit in tokens (default: litellm's "
        "model map; required when the map does not know the model); the local model's is its own")
    embed_batch_max: int = Field(default=512, gt=0, description="most texts one fleet embedding batch claims")
    embed_batch_min: int = Field(default=256, gt=0, description="a batch claims half of the pending texts, at least "
                                 "this many (or all, when fewer wait)")
    embed_batch_window_seconds: float = Field(default=0.5, ge=0, description="a request waits at most this long for "
                                              "company (fewer than embed_batch_min pending)")
    embed_drain_seconds: float = Field(default=5.0, gt=0, description="one batch task claims batches this long, "
                                       "then leaves the rest to the next (other queues' tasks run between)")
    embed_wait_timeout_seconds: float = Field(default=600.0, gt=0, description="an item waits this long for its vectors")
    embed_give_way_seconds: float = Field(default=1.0, gt=0, description="a load whose texts other batches hold "
                                          "gives its worker back and comes again after this long (once)")
    embed_preload: bool = Field(default=True, description="load the local model in the worker before it forks")

    # --- cognify ---
    max_chunk_tokens: int = Field(
        default=256, gt=8, description="most tokens of a chunk, counted by the embedder's own tokenizer; capped "
        "at the embedder's window (254 content tokens for local:all-MiniLM-L6-v2), so every chunk is embedded whole")
    max_content_bytes: int = Field(default=10 * 1024 * 1024, gt=0)

    # --- recall ---
    bm25_k1: float = Field(default=1.5, ge=0.0, description="Okapi BM25 term-frequency saturation")
    bm25_b: float = Field(default=0.75, ge=0.0, le=1.0, description="Okapi BM25 length normalisation")

    # --- graph maintenance passes (SPEC 7) ---
    contradiction_max_facts: int = Field(default=500, ge=2, description="facts sent in one contradiction check")
    contradiction_min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)

    # --- Celery ---
    queue_ingest: str = "ingest"
    queue_llm: str = "llm"
    queue_embed: str = "embed"
    queue_maintenance: str = "maintenance"
    # The api queue: public producer tasks (accept, status, recall). Celery's default queue name,
    # so a bare Celery(broker=..., backend=...) producer reaches it without any routing.
    queue_api: str = "celery"
    api_threads: int = Field(default=8, ge=0, description="threads serving the api queue in `engram worker`")
    api_switch_interval_seconds: float = Field(
        default=0.0005, gt=0, le=0.1, description="GIL switch interval of thread-pool workers (Python's default 0.005)")
    pipeline_nice: int = Field(default=10, ge=0, le=19, description="niceness of stage-work processes")
    accept_backlog_bound: int = Field(
        default=200, ge=0, description="open runs above which accept reports queued_ahead and eta_s")
    task_max_retries: int = Field(default=3, ge=0)
    accept_max_retries: int = Field(default=6, ge=0, description="public tasks retry a database/broker outage")
    retry_backoff_base_seconds: float = Field(default=2.0, gt=0)
    retry_backoff_max_seconds: int = Field(default=60, gt=0)
    longest_task_seconds: int = Field(default=1800, gt=0)
    short_result_ttl_seconds: int = Field(
        default=600, gt=0, description="how long a recall / agent memory / sessions / forget result stays in the "
        "result backend for a producer that never fetches it (the Engram client deletes it once read)")
    broker_outage_seconds: float = Field(
        default=60.0, gt=0, description="publishes (accepts, next chain links, retries) wait out a broker outage this long")
    run_heartbeat_timeout_seconds: int = Field(default=300, gt=0)
    run_max_attempts: int = Field(default=3, ge=1, description="sweep resumes an abandoned run this often")
    llm_concurrency: int = Field(default=4, ge=1, description="parallel LLM calls within one extract task")

    # --- claims ---
    lock_lease_seconds: float = Field(default=1800, gt=0, description="claim lease; renewed while the holder works")

    # --- sessions and improve (SPEC 6) ---
    improve_automatic: bool = Field(default=True, description="remember with a session requests improves")
    improve_debounce_entries: int = Field(default=10, ge=1, description="N: new entries that start an improve")
    improve_debounce_seconds: float = Field(default=120.0, gt=0, description="T: elapsed time that starts one")
    improve_admission: str | None = Field(default=None, description="host callback 'module:function'; fail-open")
    improve_max_passes: int = Field(default=3, ge=1, description="holder re-checks for new work this often")
    improve_max_llm_calls: int = Field(default=0, ge=0, description="budget per improve run; 0 = unlimited")
    improve_max_tokens: int = Field(default=0, ge=0, description="budget per improve run; 0 = unlimited")
    improve_disabled_stages: str = Field(default="", description="comma-separated stage names")
    improve_opt_in_stages: str = Field(default="", description="comma-separated opt-in stages to enable")
    improve_sweep_seconds: float = Field(default=30.0, gt=0, description="period of the improve beat sweeps")
    vector_index_sweep_seconds: float = Field(
        default=300.0, gt=0, description="period of the sweep that gives each big dataset its own vector indexes")
    vector_ef_search: int = Field(default=100, ge=10, le=1000, description="hnsw.ef_search of every vector read: "
                                  "higher finds more of the exact nearest, slower (docs/operations.md)")
    vector_index_m: int = Field(default=32, ge=M_MIN, le=M_MAX, description="HNSW m of each dataset's own vector "
                                "index; the sweep rebuilds an index built with another (docs/operations.md)")
    vector_index_ef_construction: int = Field(default=256, ge=2 * M_MIN, le=EF_CONSTRUCTION_MAX,
                                              description="HNSW ef_construction "
                                              "of each dataset's own vector index, >= 2 x m")
    vector_index_build_memory: str | None = Field(default=None, description="maintenance_work_mem of an own index's"
                                                  " build (512MB, 2GB); unset = the server's. docs/operations.md")
    # Agentic completion (SPEC 8)
    agent_max_iterations: int = Field(default=6, ge=1, le=50, description="tool-loop steps before a forced answer")
    agent_max_tokens: int = Field(default=60_000, ge=1000, description="tokens one agentic recall may spend")
    agent_max_seconds: float = Field(default=120.0, gt=0, description="wall time one agentic recall may take")
    agent_tools: str = Field(default="", description="comma-separated 'module:function' host tools (allow-list)")
    agent_skill_improvement: bool = Field(default=False, description="opt-in: engram.skills.improve drafts procedures")
    beat_lock_seconds: float = Field(default=30.0, gt=0, description="lease of the single-beat lock")

    # --- observability (docs/operations.md) ---
    metrics_port: int | None = Field(default=None, ge=1, le=65535, description="`engram worker` serves "
                                     "Prometheus /metrics on this port (same as --metrics-port); unset = off")
    metrics_address: str = Field(default="127.0.0.1", description="address the metrics endpoint binds "
                                 "(0.0.0.0 for a scraper on another host or container)")
    otlp_endpoint: str | None = Field(default=None, description="OTLP/HTTP collector (http://host:4318): "
                                      "workers send OpenTelemetry traces there; unset = tracing off")
    otel_service_name: str = Field(default="engram", description="service.name of the traces")

    @field_validator("state_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @model_validator(mode="after")
    def _hnsw(self) -> Settings:
        try:
            check_build_params(self.vector_index_m, self.vector_index_ef_construction)
        except ValueError as exc:
            raise ValueError(f"vector_index_m / vector_index_ef_construction: {exc}") from None
        return self

    @field_validator("embedded_shared_buffers")
    @classmethod
    def _shared_buffers(cls, value: str) -> str:
        if value != "auto" and (size_mb(value) or 0) < 128:
            raise ValueError(f"embedded_shared_buffers must be auto or a size of at least 128MB like 512MB or 4GB,"
                             f" got {value!r}")
        return value

    @field_validator("vector_index_build_memory")
    @classmethod
    def _memory(cls, value: str | None) -> str | None:
        return check_build_memory(value)

    @field_validator("extraction_mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in {"single", "two_call"}:
            raise ValueError("extraction_mode must be 'single' or 'two_call'")
        return value

    @field_validator("improve_disabled_stages", "improve_opt_in_stages")
    @classmethod
    def _stages(cls, value: str) -> str:
        # The names are checked against the improve registry when the app is built (celery_app).
        return ",".join(n.strip() for n in value.split(",") if n.strip())

    @property
    def improve_disabled(self) -> list[str]:
        return [n for n in self.improve_disabled_stages.split(",") if n]

    @property
    def improve_opt_in(self) -> list[str]:
        return [n for n in self.improve_opt_in_stages.split(",") if n]

    @property
    def pipeline_queues(self) -> list[str]:
        return [self.queue_ingest, self.queue_llm, self.queue_embed, self.queue_maintenance]

    @property
    def queues(self) -> list[str]:
        return [*self.pipeline_queues, self.queue_api]

    @property
    def queue_recall(self) -> str:
        # Recall (and status) are served on the api queue, beside accepting.
        return self.queue_api

    @property
    def visibility_timeout(self) -> int:
        # Above the longest task, or Redis would redeliver a message still being worked on.
        return self.longest_task_seconds * 2


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def reset_settings() -> None:
    """Forget cached settings (tests and the CLI change the environment)."""
    get_settings.cache_clear()


def load_configured(path: str):
    """The object a setting names as 'module:function' (or 'module.function'): host code such as
    ENGRAM_IMPROVE_ADMISSION's callback or ENGRAM_AGENT_TOOLS' handlers. Raises when it cannot."""
    module, _, name = path.partition(":") if ":" in path else path.rpartition(".")
    return getattr(importlib.import_module(module), name)
