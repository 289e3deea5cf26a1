"""One pooled engine per process, created lazily after fork and never shared across one."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, make_url, pool, text

from engram.adapters.services import resolve
from engram.settings import Settings, get_settings

_lock = threading.Lock()
_engine: Engine | None = None
_engine_pid: int | None = None
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


class SchemaMismatch(RuntimeError):
    """The database schema does not fit this configuration (dimension, migrations)."""


def get_engine(settings: Settings | None = None) -> Engine:
    global _engine, _engine_pid
    pid = os.getpid()
    if _engine is not None and _engine_pid == pid:
        return _engine
    with _lock:
        if _engine is None or _engine_pid != pid:
            if _engine is not None:
                # Inherited from the parent through fork: drop its sockets without closing them.
                _engine.dispose(close=False)
            settings = settings or get_settings()
            url = make_url(resolve(settings).database_url)
            _engine = create_engine(
                url,
                pool_size=5,
                max_overflow=5,
                pool_pre_ping=True,
                pool_recycle=1800,
                # pg_stat_activity names the OS process behind every session (ops, and the
                # kill test that finds the process holding an embedding batch).
                connect_args={"application_name": f"engram:{pid}"},
            )
            host = str(url.host or url.query.get("host") or "localhost")
            if host.startswith("/") or host in LOCAL_HOSTS:  # a unix socket or this machine's address
                event.listen(_engine, "connect", follow_niceness)
            _engine_pid = pid
    return _engine


def follow_niceness(dbapi_connection, _record) -> None:
    """A niced process's session on a Postgres of this machine (the embedded one) runs at the
    process's niceness: a pipeline process's SQL yields the CPU to the api worker's sessions as
    its Python does. Without it every backend runs at the server's priority, in the server's own
    scheduling group (docs/operations.md#the-worker-tree)."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if nice <= 0:
        return
    backend = dbapi_connection.info.backend_pid  # psycopg's: no query, so no transaction opened
    try:
        if Path(f"/proc/{backend}/comm").read_text().strip() != "postgres":
            return  # a server in a container or elsewhere: that pid is not its backend
        if os.getpriority(os.PRIO_PROCESS, backend) < nice:
            os.setpriority(os.PRIO_PROCESS, backend, nice)
    except OSError:  # no such process here, or another user's server: leave it
        pass


def dispose_engine() -> None:
    """Forget the engine (after a fork, or when the settings change)."""
    global _engine, _engine_pid
    with _lock:
        if _engine is not None:
            _engine.dispose(close=_engine_pid == os.getpid())
        _engine = None
        _engine_pid = None


def schema_dimension(engine: Engine) -> int | None:
    with engine.connect() as conn:
        exists = conn.execute(text("SELECT to_regclass('engram_meta')")).scalar()
        if not exists:
            return None
        value = conn.execute(text("SELECT value FROM engram_meta WHERE key = 'embedding_dimension'")).scalar()
        return int(value) if value is not None else None


def check_dimension(engine: Engine, configured: int) -> None:
    """Fail at start-up, not at the first insert, when the embedder and schema disagree."""
    found = schema_dimension(engine)
    if found is None:
        raise SchemaMismatch("the database has no Engram schema (fix: engram db upgrade)")
    if found != configured:
        raise SchemaMismatch(
            f"embedding dimension mismatch: schema has vector({found}) but ENGRAM_EMBEDDING_DIMENSION="
            f"{configured} (fix: set ENGRAM_EMBEDDING_DIMENSION={found} or use a fresh database)"
        )


@dataclass(frozen=True)
class PostgresProbe:
    version: str
    vector_available: str | None  # the pgvector version the server could install
    vector_installed: str | None  # the one installed in this database


def probe_postgres(url: str, timeout: int = 5) -> PostgresProbe:
    """One short-lived connection (no pool, `engram doctor`): the server and pgvector as they are."""
    engine = create_engine(url, poolclass=pool.NullPool, connect_args={"connect_timeout": timeout})
    try:
        with engine.connect() as conn:
            version = conn.execute(text("SHOW server_version")).scalar()
            available = conn.execute(
                text("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")).scalar()
            installed = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
            return PostgresProbe(str(version), available, installed)
    finally:
        engine.dispose()


def check_dimension_at(url: str, configured: int) -> None:
    """check_dimension over a short-lived connection to `url`."""
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        check_dimension(engine, configured)
    finally:
        engine.dispose()
