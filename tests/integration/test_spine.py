"""The spine: payload validation at the task boundary, migrations, doctor."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid

import pytest
from sqlalchemy import text

from engram.adapters.store import migrate


def _table_counts(store) -> dict[str, int]:
    with store.unit_of_work() as uow:
        tables = ["users", "datasets", "dataset_grants", "data_items", "documents", "chunks", "entities",
                  "edges", "summaries", "pipeline_runs", "stage_runs"]
        return {t: uow.conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in tables}


def test_malformed_payload_fails_with_validation_error_writes_nothing_and_is_not_retried(worker, store):
    before = _table_counts(store)
    result = worker.app.send_task("engram.remember", kwargs={"dataset": "", "itemz": [1], "importance": 7})
    with pytest.raises(Exception) as caught:
        result.get(timeout=60)
    message = str(caught.value)
    assert "invalid payload for engram.remember" in message
    assert "dataset" in message and "importance" in message and "itemz" in message
    assert result.state == "FAILURE"
    assert (result.retries or 0) == 0
    assert _table_counts(store) == before


@contextlib.contextmanager
def _scratch_database(services):
    """A separate database on the same server (its URL): migrating it disturbs no other test."""
    import psycopg

    name = f"engram_migr_{uuid.uuid4().hex[:8]}"
    admin = services.database_url.replace("postgresql+psycopg://", "postgresql://")
    base, _, query = admin.partition("?")
    admin_url = base.rsplit("/", 1)[0] + "/postgres" + ("?" + query if query else "")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + f"/{name}" + (
            "?" + query if query else "")
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_downgrade_base_then_upgrade_head_on_a_populated_database(services, worker, dataset_name):
    from sqlalchemy import create_engine, pool

    with _scratch_database(services) as url:
        migrate.upgrade(url)
        engine = create_engine(url, poolclass=pool.NullPool)
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO users (id, name) VALUES (gen_random_uuid(), 'u')"))
            conn.execute(text("INSERT INTO datasets (id, name, owner_id) SELECT gen_random_uuid(), 'd', id FROM users"))
        migrate.downgrade(url, "base")
        assert migrate.current_revision(url) is None
        migrate.upgrade(url)
        assert migrate.current_revision(url) == migrate.head_revision()
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM users")).scalar_one() == 0
            assert conn.execute(text("SELECT value FROM engram_meta WHERE key='embedding_dimension'")).scalar() == "384"
        engine.dispose()


def test_partial_runs_migration_turns_completed_captures_with_a_failed_stage_partial(services, worker):
    from sqlalchemy import create_engine, pool

    with _scratch_database(services) as url:
        migrate.upgrade(url, "0014")
        engine = create_engine(url, poolclass=pool.NullPool)
        runs = {key: uuid.uuid4() for key in ("capture_failed", "capture_clean", "cognify_failed")}
        with engine.begin() as conn:
            for key, run_id in runs.items():
                conn.execute(text("INSERT INTO pipeline_runs (id, pipeline, status) VALUES (:i, :p, 'completed')"),
                             {"i": run_id, "p": key.split("_")[0]})
                conn.execute(text("INSERT INTO stage_runs (run_id, stage, position, status)"
                                  " VALUES (:i, 'link', 0, :s)"),
                             {"i": run_id, "s": "completed" if key.endswith("clean") else "failed"})

        def statuses() -> dict[str, str]:
            with engine.connect() as conn:
                got = dict(conn.execute(text("SELECT id, status FROM pipeline_runs")).all())
            return {key: got[run_id] for key, run_id in runs.items()}

        migrate.upgrade(url)
        assert statuses() == {"capture_failed": "partial", "capture_clean": "completed",
                              "cognify_failed": "completed"}
        migrate.downgrade(url, "0014")
        assert set(statuses().values()) == {"completed"}
        engine.dispose()


def _doctor(env_overrides: dict, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_overrides, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "engram.cli", "doctor"], env=env, capture_output=True,
                          text=True, timeout=300)


def _healthy(out: subprocess.CompletedProcess) -> None:
    assert out.returncode == 0, out.stdout + out.stderr
    for component in ("postgres", "pgvector", "migrations", "schema", "redis", "embedder", "llm"):
        assert component in out.stdout
    assert "FAIL" not in out.stdout


def test_doctor_reports_every_component_healthy_with_explicit_urls(services):
    out = _doctor({})  # the services fixture exports ENGRAM_DATABASE_URL and ENGRAM_REDIS_URL
    _healthy(out)
    assert "external PostgreSQL" in out.stdout


def test_doctor_reports_every_component_healthy_on_the_embedded_default(services):
    if not (services.embedded_postgres and services.embedded_redis):
        pytest.skip("run against external servers")
    out = _doctor({}, drop=("ENGRAM_DATABASE_URL", "ENGRAM_REDIS_URL"))
    _healthy(out)
    assert "embedded PostgreSQL" in out.stdout and "embedded Redis" in out.stdout


def _port_open(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _port_open(6379), reason="no system Redis on 127.0.0.1:6379")
def test_doctor_reports_healthy_with_the_machines_own_redis(services):
    out = _doctor({"ENGRAM_REDIS_URL": "redis://127.0.0.1:6379/15"})
    _healthy(out)
    assert "external Redis" in out.stdout


def test_doctor_names_a_wrong_url_in_one_line_without_a_traceback(services):
    out = _doctor({"ENGRAM_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"})
    assert out.returncode == 1
    assert "cannot connect" in out.stdout and "fix:" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


@pytest.mark.skipif(not _port_open(5432), reason="no system PostgreSQL on 127.0.0.1:5432")
def test_doctor_names_missing_pgvector_on_a_server_without_it(services):
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        has_vector = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name='vector'").fetchone()
    if has_vector:
        pytest.skip("this system PostgreSQL has pgvector")
    out = _doctor({"ENGRAM_DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/postgres"})
    assert out.returncode == 1
    assert "pgvector extension is not installed" in out.stdout
    assert "fix:" in out.stdout
