"""Filtered vector search over tables shared by datasets of very different sizes: a small
dataset's nearest rows are its exact top-k whatever shares the table; a dataset past the
threshold gets its own HNSW index, recall reads through it, and forget removes it."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from pydantic import ValidationError
from sqlalchemy import text

from engram.adapters.store.search import SearchRepository
from engram.adapters.store.vector_indexes import (REBUILT, RETRY_FIRST_S, VECTOR_TABLES, VectorIndexes,
                                                   index_name, nearest_sql, routes)
from engram.settings import Settings

DIM_SEED = 11
THRESHOLD = 150  # rows: the sweep's own-index threshold in these tests


def _vec(v) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def _fill(store, dataset: uuid.UUID, vectors: np.ndarray) -> list[uuid.UUID]:
    """One document of len(vectors) chunks and as many fact edges, vectors as given."""
    item, document = uuid.uuid4(), uuid.uuid4()
    chunk_ids = [uuid.uuid4() for _ in vectors]
    with store.unit_of_work() as uow:
        c = uow.conn
        c.execute(text("INSERT INTO data_items (id, dataset_id, content_hash, name, content)"
                       " VALUES (:i, :d, :h, 'doc', 'x')"), {"i": item, "d": dataset, "h": uuid.uuid4().hex})
        c.execute(text("INSERT INTO documents (id, data_item_id, dataset_id, doc_type, title)"
                       " VALUES (:id, :i, :d, 'text', 'doc')"), {"id": document, "i": item, "d": dataset})
        for n, (chunk, v) in enumerate(zip(chunk_ids, vectors)):
            c.execute(text("INSERT INTO chunks (id, document_id, dataset_id, chunk_index, text, token_count, cut_type,"
                           " embedding) VALUES (:id, :doc, :d, :n, :t, 3, 'end', CAST(:v AS vector))"),
                      {"id": chunk, "doc": document, "d": dataset, "n": n, "t": f"chunk {n}", "v": _vec(v)})
            c.execute(text("INSERT INTO edges (id, dataset_id, source_id, target_id, relationship, edge_text, embedding)"
                           " VALUES (:id, :d, :s, :t, 'knows', :x, CAST(:v AS vector))"),
                      {"id": uuid.uuid4(), "d": dataset, "s": uuid.uuid4(), "t": uuid.uuid4(), "x": f"fact {n}",
                       "v": _vec(v)})
    return chunk_ids


def _dimension(store) -> int:
    with store.engine.connect() as conn:
        return conn.execute(text("SELECT atttypmod FROM pg_attribute WHERE attrelid = 'chunks'::regclass"
                                 " AND attname = 'embedding'")).scalar_one()


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def two_datasets(store):
    """A big dataset (THRESHOLD + 50 chunks) and a small one (30) whose vectors lie among the big one's."""
    rng = np.random.default_rng(DIM_SEED)
    dim = _dimension(store)
    suffix = uuid.uuid4().hex[:8]
    with store.unit_of_work() as uow:
        big = uow.access.create_dataset("default", f"vx-big-{suffix}")
        small = uow.access.create_dataset("default", f"vx-small-{suffix}")
    big_v, small_v = _unit(rng.normal(size=(THRESHOLD + 50, dim))), _unit(rng.normal(size=(30, dim)))
    big_ids, small_ids = _fill(store, big, big_v), _fill(store, small, small_v)
    yield {"big": (big, f"vx-big-{suffix}", big_ids, big_v), "small": (small, f"vx-small-{suffix}", small_ids, small_v),
           "dim": dim, "rng": rng}
    store.vector_indexes().drop([big, small])


def _exact_top(ids: list[uuid.UUID], vectors: np.ndarray, query: np.ndarray, k: int) -> list[uuid.UUID]:
    distance = 1 - vectors @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(distance, kind="stable")[:k]]


def test_a_small_dataset_sharing_the_table_gets_its_exact_top_k(store, two_datasets):
    small, _, small_ids, small_v = two_datasets["small"]
    store.vector_indexes().sweep(rows=THRESHOLD)
    for _ in range(5):
        query = two_datasets["rng"].normal(size=two_datasets["dim"])
        with store.unit_of_work() as uow:
            found = [r["id"] for r in uow.search.chunks_by_vector([small], query, 10)]
            facts = uow.search.edges_by_vector([small], query, 10)
        assert found == _exact_top(small_ids, small_v, query, 10)
        assert len(facts) == 10 and all(f["edge_text"].startswith("fact ") for f in facts)


def test_a_dataset_past_the_threshold_gets_its_own_index_and_forget_removes_it(store, client, two_datasets):
    big, big_name, big_ids, big_v = two_datasets["big"]
    small = two_datasets["small"][0]
    done = store.vector_indexes().sweep(rows=THRESHOLD)
    assert {index_name("chunks", big), index_name("edges", big)} <= set(done["built"])
    assert not any(index_name(t, small) in done["built"] for t in VECTOR_TABLES)
    assert store.vector_indexes().sweep(rows=THRESHOLD)["built"] == []  # once
    query = two_datasets["rng"].normal(size=two_datasets["dim"])
    with store.unit_of_work() as uow:
        found = [r["id"] for r in uow.search.chunks_by_vector([big, small], query, 10)]
        both = _exact_top(big_ids + two_datasets["small"][2], np.vstack([big_v, two_datasets["small"][3]]), query, 10)
        assert len(set(found) & set(both)) >= 9  # HNSW: approximate, at 200 rows all but exact
        assert index_name("chunks", big) in _plan(uow.conn, big, query)  # recall's read walks the own graph
    client.forget(big_name)
    assert not any(index_name(t, big) in store.vector_indexes().present() for t in VECTOR_TABLES)


def _plan(conn, dataset: uuid.UUID, query, route=None) -> str:
    """The plan of recall's read of the dataset's chunks, by its current route unless given (a sort
    forbidden: at 200 rows sorting them all would be cheaper than any graph)."""
    conn.execute(text("SET LOCAL enable_sort = off"))
    sql = nearest_sql("chunks", "h", "h.id", "", route or routes(conn, ["chunks"], [dataset])["chunks"])
    return "\n".join(conn.execute(text(f"EXPLAIN {sql}"), {"v": _vec(query), "k": 10, "rest": []}).scalars())


def test_a_dataset_with_its_own_graph_is_never_read_through_the_shared_one(store, two_datasets):
    # At 1M chunks the planner, free to pick either graph for a dataset's read, walked the shared
    # one with the filter once the own graph was built with m 32 (its cost estimate grows with m):
    # recall@10 0.43. The own read's order is now one that only the own graph can give.
    big, _, big_ids, big_v = two_datasets["big"]
    VectorIndexes(store.engine, m=32, ef_construction=64).sweep(rows=THRESHOLD)
    query = two_datasets["rng"].normal(size=two_datasets["dim"])
    with store.unit_of_work() as uow:
        assert index_name("chunks", big) in _plan(uow.conn, big, query)
        found = [r["id"] for r in uow.search.chunks_by_vector([big], query, 10)]
    assert len(set(found) & set(_exact_top(big_ids, big_v, query, 10))) >= 9
    with store.engine.connect() as conn, conn.begin() as tx:  # the own graph gone (rolled back after)
        route = routes(conn, ["chunks"], [big])["chunks"]  # the read as planned with the own graph there
        conn.execute(text(f'DROP INDEX "{index_name("chunks", big)}"'))
        plan = _plan(conn, big, query, route)
        tx.rollback()
    assert "ix_chunks_embedding" not in plan, plan


def test_an_own_index_of_the_older_full_precision_form_is_rebuilt_and_read_meanwhile(store, two_datasets):
    big, _, big_ids, big_v = two_datasets["big"]
    name = index_name("chunks", big)
    with store.engine.connect() as conn:  # as an earlier release built it
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text(
            f'CREATE INDEX "{name}" ON chunks USING hnsw (embedding vector_cosine_ops) WHERE dataset_id = \'{big}\''))
    query = two_datasets["rng"].normal(size=two_datasets["dim"])
    with store.unit_of_work() as uow:  # not read as an own graph: the dataset's rows are still found
        assert routes(uow.conn, ["chunks"], [big])["chunks"].own == []
        found = [r["id"] for r in uow.search.chunks_by_vector([big], query, 10)]
    assert len(set(found) & set(_exact_top(big_ids, big_v, query, 10))) >= 9
    done = store.vector_indexes().sweep(rows=THRESHOLD)
    assert name in done["rebuilt"]
    with store.unit_of_work() as uow:
        assert name in _plan(uow.conn, big, query)


def test_the_sweep_drops_an_index_whose_dataset_was_emptied(store, two_datasets):
    big = two_datasets["big"][0]
    store.vector_indexes().sweep(rows=THRESHOLD)
    assert index_name("chunks", big) in store.vector_indexes().present()
    with store.unit_of_work() as uow:
        uow.conn.execute(text("DELETE FROM data_items WHERE dataset_id = :d"), {"d": big})
        uow.conn.execute(text("DELETE FROM edges WHERE dataset_id = :d"), {"d": big})
    done = store.vector_indexes().sweep(rows=THRESHOLD)
    assert index_name("chunks", big) in done["dropped"]
    assert not any(index_name(t, big) in store.vector_indexes().present() for t in VECTOR_TABLES)


def _options(store, name: str) -> list[str]:
    with store.engine.connect() as conn:
        return conn.execute(text("SELECT reloptions FROM pg_class WHERE relname = :n"), {"n": name}).scalar_one()


def test_changed_build_parameters_rebuild_each_own_index_under_its_name(store, two_datasets):
    big, _, big_ids, big_v = two_datasets["big"]
    store.vector_indexes().sweep(rows=THRESHOLD)
    name = index_name("chunks", big)
    assert _options(store, name) == ["m=32", "ef_construction=256"]  # the defaults, spelled out
    tuned = VectorIndexes(store.engine, "64MB", m=8, ef_construction=40)  # with its build memory
    assert name in tuned.stale()
    done = tuned.sweep(rows=THRESHOLD)
    assert name in done["rebuilt"] and done["built"] == []
    assert _options(store, name) == ["m=8", "ef_construction=40"]
    assert not any(n.endswith(REBUILT) for n in tuned.present())
    assert tuned.sweep(rows=THRESHOLD)["rebuilt"] == []  # once
    query = two_datasets["rng"].normal(size=two_datasets["dim"])
    with store.unit_of_work() as uow:  # recall still reads the dataset through its (rebuilt) graph
        found = [r["id"] for r in uow.search.chunks_by_vector([big], query, 10)]
    assert len(set(found) & set(_exact_top(big_ids, big_v, query, 10))) >= 9


def test_a_sweep_finishes_or_clears_a_rebuild_that_died(store, two_datasets):
    big = two_datasets["big"][0]
    store.vector_indexes().sweep(rows=THRESHOLD)
    chunks, edges = index_name("chunks", big), index_name("edges", big)
    with store.engine.connect() as conn:  # died after dropping the old graph / before it finished
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.execute(text(f'ALTER INDEX "{chunks}" RENAME TO "{chunks}{REBUILT}"'))
        conn.execute(text(f'CREATE INDEX "{edges}{REBUILT}" ON edges USING hnsw (embedding vector_cosine_ops)'
                          f" WHERE dataset_id = '{big}'"))
    store.vector_indexes().sweep(rows=THRESHOLD)
    present = store.vector_indexes().present()
    assert chunks in present and edges in present
    assert not any(n.endswith(REBUILT) for n in present)


def test_bad_build_parameters_are_refused_before_any_ddl(store):
    with pytest.raises(ValueError, match="ef_construction"):
        VectorIndexes(store.engine, m=16, ef_construction=20)
    with pytest.raises(ValidationError, match="vector_index_m / vector_index_ef_construction: .* at least 2 x m"):
        Settings(vector_index_m=32, vector_index_ef_construction=40)
    with pytest.raises(ValidationError, match="must look like 512MB"):
        Settings(vector_index_build_memory="lots")


def test_the_configured_ef_search_is_what_a_vector_read_runs_with(store, two_datasets):
    big = two_datasets["big"][0]
    query = two_datasets["rng"].normal(size=two_datasets["dim"])
    for ef in (100, 333):
        with store.engine.begin() as conn:
            SearchRepository(conn, ef_search=ef).chunks_by_vector([big], query, 10)
            assert conn.execute(text("SHOW hnsw.ef_search")).scalar_one() == str(ef)


@pytest.fixture
def refused_index(store, two_datasets):
    """Postgres refuses to create one own index (the big dataset's on chunks): an event trigger
    raising for a CREATE INDEX naming it, as a build that runs out of shared memory fails."""
    name = index_name("chunks", two_datasets["big"][0])
    with store.engine.begin() as conn:
        conn.execute(text(
            "CREATE OR REPLACE FUNCTION engram_test_refuse_index() RETURNS event_trigger LANGUAGE plpgsql AS $$"
            f" BEGIN IF current_query() LIKE '%{name}%' THEN"
            " RAISE EXCEPTION 'could not resize shared memory segment (test)'; END IF; END $$"))
        conn.execute(text("CREATE EVENT TRIGGER engram_test_refuse_index ON ddl_command_start WHEN TAG IN"
                          " ('CREATE INDEX') EXECUTE FUNCTION engram_test_refuse_index()"))

    def allow():
        with store.engine.begin() as conn:
            conn.execute(text("DROP EVENT TRIGGER IF EXISTS engram_test_refuse_index"))
            conn.execute(text("DROP FUNCTION IF EXISTS engram_test_refuse_index()"))

    try:
        yield name, allow
    finally:
        allow()


def _time_passes(store, name: str) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE vector_index_failures SET retry_after = now() - interval '1 second'"
                          " WHERE name = :n"), {"n": name})


def test_a_failing_build_waits_longer_each_time_and_does_not_stop_the_others(store, two_datasets, refused_index):
    big, _, big_ids, big_v = two_datasets["big"]
    name, allow = refused_index
    indexes = store.vector_indexes()
    done = indexes.sweep(rows=THRESHOLD)  # the refusal is recorded, not raised; the edges index still builds
    assert done["failed"] == [name] and index_name("edges", big) in done["built"]
    assert name not in indexes.present()
    failure = indexes.failures()[name]
    assert failure["failures"] == 1 and "could not resize shared memory" in failure["last_error"]
    query = two_datasets["rng"].normal(size=two_datasets["dim"])
    with store.unit_of_work() as uow:  # meanwhile recall reads the dataset exactly
        found = [r["id"] for r in uow.search.chunks_by_vector([big], query, 10)]
    assert found == _exact_top(big_ids, big_v, query, 10)

    again = indexes.sweep(rows=THRESHOLD)  # the next sweep does not retry it yet
    assert again["failed"] == [] and again["built"] == [] and again["waiting"] == [name]
    assert indexes.failures()[name]["failures"] == 1

    _time_passes(store, name)  # fails again: the wait doubles
    assert indexes.sweep(rows=THRESHOLD)["failed"] == [name]
    failure = indexes.failures()[name]
    with store.engine.connect() as conn:
        wait = conn.execute(text("SELECT extract(epoch FROM CAST(:t AS timestamptz) - now())"),
                            {"t": failure["retry_after"]}).scalar_one()
    assert failure["failures"] == 2 and 2 * RETRY_FIRST_S - 60 < wait <= 2 * RETRY_FIRST_S

    allow()
    _time_passes(store, name)  # the cause gone, the next try builds it and forgets the failures
    assert indexes.sweep(rows=THRESHOLD)["built"] == [name]
    assert indexes.present()[name] and name not in indexes.failures()


def test_forget_clears_a_failing_index_record(store, two_datasets, refused_index):
    big = two_datasets["big"][0]
    name, _ = refused_index
    store.vector_indexes().sweep(rows=THRESHOLD)
    assert name in store.vector_indexes().failures()
    store.vector_indexes().drop([big])  # what forget does after the dataset's rows went
    assert name not in store.vector_indexes().failures()
