"""Export and import (pipelines/export.py): the demo corpus out of one database and into a fresh
one, by the public tasks in parts and by the CLI; recall there answers the same (ids, scores
within 1e-6) from the same rows; a bad or newer file writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
from sqlalchemy import create_engine, pool, text

from engram.adapters.store import Store, migrate
from engram.cli.demo import DEMO_CORPUS
from engram.pipelines import export, ids
from tests.integration.test_recall_multihop import assert_bm25_statistics_are_fresh
from tests.integration.test_spine import _scratch_database

QUESTIONS = [("Who is the CEO of Harbor Dynamics?", "TRIPLET_COMPLETION"),
             ("When was Alder Bay University founded?", "CHUNKS"),
             ("What happened during the Great Flood of 2011?", None),  # the default route
             ("Which company did Harbor Dynamics acquire?", "GRAPH_COMPLETION"),
             ("Greyfen Dam", "CHUNKS_LEXICAL")]


@pytest.fixture(scope="module")
def demo(worker):
    """The demo corpus remembered by `exporter`, shared with `reader`, with a session turn."""
    name = f"demo-{uuid.uuid4().hex[:6]}"
    chat = [{"speaker": "Mara", "text": "Did you hear Harbor Dynamics named a new CEO?"},
            {"speaker": "Ilse", "text": "Yes, the board announced it yesterday in Port Alder."},
            {"speaker": "Mara", "text": "The Greyfen Dam inspection is next month too."},
            {"speaker": "Ilse", "text": "Busy spring for the Tessel River valley."}]
    statuses = worker.client.remember(dataset=name, user="exporter", paths=[DEMO_CORPUS], background=False,
                                      items=[{"name": "chat", "turns": chat, "started_at": "2024-03-04T10:00:00+00:00"}])
    assert {s.status for s in statuses} == {"completed"}
    worker.client.share(name, "reader", ["read"], user="exporter")
    worker.client.remember_turn(dataset=name, user="exporter", session_id="s1",
                                question="Who runs Harbor Dynamics?", answer="Its CEO.")
    _settle(Store(), _dataset_id(Store(), name, "exporter"))
    return name


def _settle(store: Store, dataset_id: uuid.UUID, timeout: float = 600.0) -> None:
    """Until the improve the session turn asked for, and the runs it started, are done (an
    export reads a dataset nothing writes to)."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        with store.unit_of_work() as uow:
            busy = uow.conn.execute(text(
                "SELECT (SELECT count(*) FROM pipeline_runs WHERE dataset_id = :d AND status IN ('pending', 'running'))"
                " + (SELECT count(*) FROM improve_claims WHERE dataset_id = :d AND status = 'held')"
                " + (SELECT CASE WHEN EXISTS (SELECT 1 FROM pipeline_runs WHERE dataset_id = :d"
                "   AND pipeline = 'improve' AND status NOT IN ('pending', 'running')) THEN 0 ELSE 1 END)"),
                {"d": dataset_id}).scalar_one()
        counts = _counts(store, dataset_id)
        if not busy and counts == last:
            return
        last = counts
        time.sleep(2)
    raise AssertionError(f"dataset {dataset_id} still busy after {timeout}s")


@pytest.fixture(scope="module")
def scratch(services):
    with _scratch_database(services) as url:
        migrate.upgrade(url)
        engine = create_engine(url, poolclass=pool.NullPool)
        yield url, Store(engine)
        engine.dispose()


def _pages(client, dataset: str, user: str, limit: int) -> list[dict]:
    pages, cursor = [], None
    while True:
        page = client.call("engram.export", dataset=dataset, user=user, cursor=cursor, limit=limit)
        pages.append(page)
        cursor = page["cursor"]
        if cursor is None:
            return pages


def _counts(store: Store, dataset_id: uuid.UUID) -> dict[str, int]:
    with store.unit_of_work() as uow:
        return uow.export.counts(dataset_id)


def _raw_counts(store: Store, dataset_id: uuid.UUID, exported_only: bool = False) -> dict[str, int]:
    from engram.models.tables import metadata

    out = {}
    with store.unit_of_work() as uow:
        for name, table in metadata.tables.items():
            if "dataset_id" in table.c:
                where = " AND status NOT IN ('pending', 'running')" if name == "pipeline_runs" else ""
                n = uow.conn.execute(text(f"SELECT count(*) FROM {name} WHERE dataset_id = :d{where}"),
                                     {"d": dataset_id}).scalar_one()
                out[name] = 0 if exported_only and name in export.NOT_EXPORTED else n
    return out


def _dataset_id(store: Store, name: str, user: str) -> uuid.UUID:
    with store.unit_of_work() as uow:
        return uow.access.find_own(name, user)


def _records(lines) -> list[dict]:
    """Records comparable across deployments: the owner may differ (its grants and user row)."""
    owners = {f"user:{ids.user_id(u)}" for u in ("exporter", "importer")}
    out = []
    for obj in lines:
        if obj["table"] == "users":
            continue
        if obj["table"] == "dataset_grants" and obj["row"]["principal"] in owners:
            obj = {**obj, "row": {**obj["row"], "principal": "owner", "created_at": None}}
        out.append(obj)
    return sorted(out, key=lambda r: (export.TABLES.index(r["table"]), json.dumps(r["row"], sort_keys=True)))


def _answers(client, dataset: str, user: str) -> list[list[tuple]]:
    out = []
    for question, search_type in QUESTIONS:
        result = client.recall(question, datasets=[dataset], user=user, search_type=search_type, top_k=5)
        out.append([(result.search_type, i.kind, i.text, i.score, i.provenance.document_id,
                     tuple(i.provenance.chunk_ids), tuple(i.provenance.edge_ids)) for i in result.items])
    return out


def _same_answers(got: list[list[tuple]], want: list[list[tuple]]) -> None:
    assert [len(a) for a in got] == [len(a) for a in want] and any(want)
    for a, b in zip(got, want):
        for x, y in zip(a, b):
            assert x[:3] + x[4:] == y[:3] + y[4:]
            assert abs(x[3] - y[3]) <= 1e-6


def _cli(*args: str, database_url: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200")
    if database_url:
        env["ENGRAM_DATABASE_URL"] = database_url
    return subprocess.run([sys.executable, "-m", "engram.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_public_tasks_move_the_demo_in_parts_and_recall_answers_the_same(worker, worker_factory, store, demo,
                                                                         scratch):
    url, target = scratch
    pages = _pages(worker.client, demo, "exporter", limit=300)
    assert len(pages) > 2 and pages[0]["header"]["version"] == export.VERSION
    assert all(p["header"] is None for p in pages[1:]) and all(len(p["records"]) <= 300 for p in pages)
    source_id = _dataset_id(store, demo, "exporter")
    head = pages[0]["header"]
    assert head["counts"] == _counts(store, source_id)
    assert all(head["counts"][t] > 0 for t in ("data_items", "documents", "chunks", "chunk_terms", "entities",
                                               "edges", "edge_intervals", "summaries", "session_entries", "chunk_windows",
                                               "dataset_grants", "users", "pipeline_runs", "stage_runs"))

    # A page needs the read grant; a cursor is one a page gave.
    with pytest.raises(Exception, match="does not exist for user 'stranger'"):
        worker.client.call("engram.export", dataset=demo, user="stranger")
    with pytest.raises(Exception, match="is not one an export page returned"):
        worker.client.call("engram.export", dataset=demo, user="exporter", cursor='{"table": "secrets"}')

    other = worker_factory({"ENGRAM_DATABASE_URL": url})
    import_id = uuid.uuid4().hex
    with pytest.raises(Exception, match="part 1 arrived with 0 parts staged"):
        other.client.call("engram.import", import_id=import_id, user="importer", part=1, records=[], last=True)
    with pytest.raises(Exception, match="only part 0, carries the export's header"):
        other.client.call("engram.import", import_id=import_id, user="importer", part=0, records=[])
    for n, page in enumerate(pages):
        got = other.client.call("engram.import", import_id=import_id, user="importer", part=n,
                                header=page["header"], records=page["records"], last=n == len(pages) - 1,
                                dataset="moved")
        assert got["status"] == ("imported" if n == len(pages) - 1 else "staged")
    assert got["vectors"] == "reused" and got["dataset_id"] == str(source_id)
    assert got["counts"] == head["counts"]
    # The same rows (ids, vectors, provenance), counted per table the same; the importing user
    # (now the owner) is one user more.
    assert _counts(target, source_id) == {**head["counts"], "users": head["counts"]["users"] + 1}
    # Counted independently of the export's own queries: every table with a dataset_id column.
    assert _raw_counts(target, source_id) == _raw_counts(store, source_id, exported_only=True)
    assert_bm25_statistics_are_fresh(target, source_id)  # kept by the import's own writes
    again = _pages(other.client, "moved", "importer", limit=5000)
    assert _records(r for p in again for r in p["records"]) == _records(r for p in pages for r in p["records"])
    # The importing user owns it; the reader it was shared with still reads it.
    with target.unit_of_work() as uow:
        assert uow.access.grants_of(source_id, "importer") == ["read", "write", "delete", "share"]
        assert uow.access.grants_of(source_id, "reader") == ["read"]
    _same_answers(_answers(other.client, "moved", "importer"), _answers(worker.client, demo, "exporter"))
    assert other.client.recall("Greyfen Dam", datasets=["moved"], user="reader", top_k=1).items

    # Importing it again is refused with the fix, and writes nothing.
    with pytest.raises(Exception, match="already holds the exported dataset"):
        other.client.call("engram.import", import_id=uuid.uuid4().hex, user="importer", part=0,
                          header=head, records=pages[0]["records"], last=True, dataset="again")
    assert _dataset_id(target, "again", "importer") is None


def test_cli_export_and_import_round_trip_refuse_bad_files_and_reembed_for_another_model(
        worker, store, demo, services, tmp_path):
    path = tmp_path / "demo.jsonl"
    out = _cli("export", "-d", demo, "--user", "exporter", "-o", str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["format"] == export.FORMAT and head["counts"]["datasets"] == 1
    assert len(lines) - 1 == sum(n for t, n in head["counts"].items() if t != "datasets")

    graph = tmp_path / "demo.graphml"
    out = _cli("export", "-d", demo, "--user", "exporter", "--format", "graphml", "-o", str(graph))
    assert out.returncode == 0, out.stdout + out.stderr
    import xml.etree.ElementTree as ET

    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = ET.parse(graph).getroot()
    assert len(root.findall(".//g:edge", ns)) == head["counts"]["edges"]

    with _scratch_database(services) as url:
        migrate.upgrade(url)
        engine = create_engine(url, poolclass=pool.NullPool)
        target = Store(engine)
        source_id = _dataset_id(store, demo, "exporter")

        def written() -> int:
            with engine.connect() as conn:
                return conn.execute(text("SELECT (SELECT count(*) FROM datasets) + (SELECT count(*) FROM chunks)"
                                         " + (SELECT count(*) FROM users)")).scalar_one()

        newer = tmp_path / "newer.jsonl"
        newer.write_text("\n".join([json.dumps({**head, "version": export.VERSION + 1}), *lines[1:]]) + "\n")
        broken = tmp_path / "broken.jsonl"
        broken.write_text("\n".join([*lines[:-3], '{"table": "stage_runs", "row": {"run_id": "nope"}}',
                                     *lines[-2:]]) + "\n")
        short = tmp_path / "short.jsonl"
        short.write_text("\n".join(lines[:-1]) + "\n")
        for bad, message in [(newer, "written by a newer Engram"), (broken, "stage_runs.run_id cannot be"),
                             (short, "do not match its header's counts"), (graph, "cannot be imported"),
                             (tmp_path / "missing.jsonl", "no such file")]:
            out = _cli("import", str(bad), "-d", "x", database_url=url)
            assert out.returncode == 1 and message in " ".join(out.stdout.split()), out.stdout + out.stderr
            assert "Traceback" not in out.stdout + out.stderr
            assert written() == 0

        # Another model named in the header: every vector is made again with this deployment's
        # embedder, from the text the load embedded (here the same model, so the same vectors).
        other = tmp_path / "other-model.jsonl"
        other.write_text("\n".join([json.dumps({**head, "embedding": {"model": "openai/other", "dimension": 8}}),
                                    *lines[1:]]) + "\n")
        out = _cli("import", str(other), "--user", "exporter", database_url=url)
        assert out.returncode == 0 and "re-embedded" in out.stdout, out.stdout + out.stderr
        assert _counts(target, source_id) == head["counts"]
        tables = [t for t in export.VECTORS if t not in ("entity_types", "lessons", "triplet_embeddings")]
        compared = []
        for table in tables:
            query = text(f"SELECT id::text, embedding::text FROM {table} WHERE dataset_id = :d ORDER BY id")
            with store.unit_of_work() as uow:
                want = uow.conn.execute(query, {"d": source_id}).all()
            with engine.connect() as conn:
                got = conn.execute(query, {"d": source_id}).all()
            assert [r[0] for r in got] == [r[0] for r in want], table
            compared += [table] if want else []
            for (_, g), (_, w) in zip(got, want):
                g, w = json.loads(g), json.loads(w)
                assert max(abs(a - b) for a, b in zip(g, w)) < 1e-4, table
        assert {"chunks", "summaries", "entities", "edges"} <= set(compared)

        out = _cli("import", str(path), "-d", "copy", database_url=url)
        assert out.returncode == 1 and "already holds the exported dataset" in out.stdout
        engine.dispose()


def test_the_client_browses_links_exports_to_a_file_and_imports_it_elsewhere(worker, worker_factory, store, scratch,
                                                                             dataset_name, tmp_path):
    """EngramClient's typed methods for the browsing tasks, export (pages or a file) and import."""
    from engram.models.payloads import EntityDossier, GraphResult, LinkResult, ListResult, ReadResult
    from engram.models.payloads.export import ExportPage, ImportResult
    from engram.tasks.client import EngramError

    client, user = worker.client, f"client-{uuid.uuid4().hex[:6]}"
    decision = client.capture("Queue for background jobs", dataset=dataset_name, user=user, wait=True,
                              template="decision", template_fields={"chosen": "Celery", "rationale": "in the stack"},
                              entities=[{"name": "Celery", "type": "technology"}], tags=["infra"])
    lesson = client.capture("Broker outage", dataset=dataset_name, user=user, wait=True, type="lesson",
                            content="The broker went down for an hour.", summary="A broker outage.",
                            entities=[{"name": "Redis", "type": "technology"}])
    assert decision.status == lesson.status == "complete"
    linked = client.link(dataset_name, decision.object_id, "redis", "depends_on", user=user, note="the broker")
    assert isinstance(linked, LinkResult) and linked.created and linked.predicate == "dependsOn"
    listed = client.list_items(dataset_name, user=user, tag="infra")
    assert isinstance(listed, ListResult) and [i["title"] for i in listed.items] == ["Queue for background jobs"]
    obj = client.read(dataset_name, decision.object_id, user=user, max_chars=10)
    assert isinstance(obj, ReadResult) and obj.kind == "object" and len(obj.text) == 10 and obj.next_offset == 10
    redis = client.entity(dataset_name, "Redis", user=user)
    assert isinstance(redis, EntityDossier)
    assert {(f.predicate, f.origin) for f in redis.current} == {("dependsOn", "caller"), ("mentions", "entity")}
    hood = client.graph(dataset_name, "Redis", user=user, depth=2)
    assert isinstance(hood, GraphResult) and {n.name for n in hood.nodes} == {
        "Redis", "Queue for background jobs", "Broker outage", "Celery"}
    with pytest.raises(EngramError, match="unknown predicate 'likes'"):
        client.link(dataset_name, "Celery", "Redis", "likes", user=user)
    with pytest.raises(EngramError, match="does not exist for user 'stranger'"):
        client.read(dataset_name, decision.object_id, user="stranger")

    # Export: pages (the header with the first), or the same as a jsonl file.
    pages = list(client.export_pages(dataset_name, user=user, limit=7))
    assert all(isinstance(p, ExportPage) for p in pages) and len(pages) > 2 and pages[-1].cursor is None
    head = pages[0].header
    assert head["format"] == export.FORMAT and all(p.header is None for p in pages[1:])
    path = tmp_path / "client.jsonl"
    written = client.export_to(path, dataset_name, user=user, limit=7)
    lines = path.read_text().splitlines()
    assert written == len(lines) - 1 == sum(len(p.records) for p in pages) == sum(
        n for t, n in head["counts"].items() if t != "datasets")
    assert json.loads(lines[0])["counts"] == head["counts"] and not (tmp_path / "client.jsonl.partial").exists()
    with pytest.raises(EngramError, match="does not exist for user 'stranger'"):
        client.export_to(tmp_path / "no.jsonl", dataset_name, user="stranger")
    assert not (tmp_path / "no.jsonl").exists() and not (tmp_path / "no.jsonl.partial").exists()

    # Import the file into another deployment, in parts; a bad file is named and writes nothing.
    url, target = scratch
    other = worker_factory({"ENGRAM_DATABASE_URL": url}).client
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:-1], '{"table": "secrets", "row": {"id": 1}}']) + "\n")
    with pytest.raises(EngramError, match=f"line {len(lines)}: unknown table 'secrets'"):
        other.import_file(bad, user="importer", dataset="client-copy", part_size=3)
    assert _dataset_id(target, "client-copy", "importer") is None
    got = other.import_file(path, user="importer", dataset="client-copy", part_size=3)
    assert isinstance(got, ImportResult) and got.status == "imported" and got.vectors == "reused"
    assert got.counts == head["counts"] and got.dataset_id == str(_dataset_id(store, dataset_name, user))
    assert [i["title"] for i in other.list_items("client-copy", user="importer", tag="infra").items] == [
        "Queue for background jobs"]
    # The pages themselves import the same way; the deployment holds the dataset now, so it refuses.
    with pytest.raises(EngramError, match="already holds the exported dataset"):
        other.import_pages(pages, user="importer", dataset="client-again")
