"""Embedding as a fleet service: the reuse table, reuse across datasets, and a killed batch."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from engram.pipelines.cognify.embedding import normalise, text_key

DEMO = Path(__file__).resolve().parents[2] / "cli" / "data" / "demo"
MODEL = "local:all-MiniLM-L6-v2"


def _item(uow, content: str) -> uuid.UUID:
    dataset = uow.access.create_dataset("default", f"emb-{uuid.uuid4().hex[:8]}")
    item, _ = uow.graph.add_item(dataset, uuid.uuid4().hex, content, name=None, mime=None, source=None)
    return item


def _stored(uow, model: str, dimension: int, texts: dict[str, list[float]], item: uuid.UUID) -> None:
    """Through the same steps a batch takes: reference, request, claim, store."""
    keys = {text_key(normalise(t)): normalise(t) for t in texts}
    uow.embeddings.reference(model, dimension, keys, item)
    uow.embeddings.request(model, dimension, keys)
    claimed = dict(uow.embeddings.claim(model, dimension, limit=len(keys), window_seconds=0, timeout_seconds=60))
    assert set(claimed) == set(keys)
    uow.embeddings.store(model, dimension, {k: texts[t] for k, t in zip(keys, texts)})


def test_a_stored_vector_reads_back_as_exactly_the_float32_values_the_model_gave(store):
    """Vectors travel in pgvector's binary form: nothing is rounded on the way in or out."""
    import numpy as np

    texts = {f"Exact {i} {uuid.uuid4().hex}": v for i, v in enumerate(
        [[0.1, -2.5e-8, 3.4e38, -0.0], [1 / 3, 2 / 3, -1e-30, 123456.789], list(np.linspace(-1, 1, 4))])}
    with store.unit_of_work() as uow:
        _stored(uow, MODEL, 4, texts, _item(uow, "exact vectors"))
    keys = {text_key(normalise(t)): v for t, v in texts.items()}
    with store.unit_of_work() as uow:
        found = uow.embeddings.lookup(MODEL, 4, list(keys))
    assert found == {k: np.asarray(v, dtype=np.float32).tolist() for k, v in keys.items()}


def test_the_reuse_table_never_returns_a_vector_of_another_model_or_dimension(store):
    sentence = f"Harbor Dynamics builds ferries {uuid.uuid4().hex}."
    key = text_key(normalise(sentence))
    with store.unit_of_work() as uow:
        item = _item(uow, sentence)
        _stored(uow, MODEL, 3, {sentence: [1.0, 0.0, 0.0]}, item)
        _stored(uow, "openai/text-embedding-3-small", 3, {sentence: [0.0, 1.0, 0.0]}, item)
        _stored(uow, MODEL, 4, {sentence: [0.0, 0.0, 0.0, 1.0]}, item)
    with store.unit_of_work() as uow:
        assert uow.embeddings.lookup(MODEL, 3, [key]) == {key: [1.0, 0.0, 0.0]}
        assert uow.embeddings.lookup("openai/text-embedding-3-small", 3, [key]) == {key: [0.0, 1.0, 0.0]}
        assert uow.embeddings.lookup(MODEL, 4, [key]) == {key: [0.0, 0.0, 0.0, 1.0]}
        assert uow.embeddings.lookup(MODEL, 384, [key]) == {}
        assert uow.embeddings.lookup("another-model", 3, [key]) == {}
    # A vector whose length is not its recorded dimension is refused by the table itself.
    with pytest.raises(IntegrityError), store.unit_of_work() as uow:
        _stored(uow, MODEL, 5, {sentence: [1.0, 2.0]}, _item(uow, sentence))


def test_a_request_for_a_text_already_stored_is_dropped_not_embedded_again(store):
    """A request can land just after the batch that stored its vector committed: its statement's
    snapshot saw neither the vector nor (any more) the batch's request row. Seen in a bench run
    (3,013 texts embedded for 3,011 unique). The next claim drops such a request."""
    sentence = f"Harbor Dynamics builds ferries {uuid.uuid4().hex}."
    key = text_key(normalise(sentence))
    with store.unit_of_work() as uow:
        _stored(uow, MODEL, 3, {sentence: [1.0, 0.0, 0.0]}, _item(uow, sentence))
    with store.unit_of_work() as uow:  # the state that race leaves behind
        uow.conn.execute(text("INSERT INTO embedding_requests (model, dimension, text_hash, text)"
                              " VALUES (:m, 3, :h, :t)"), {"m": MODEL, "h": key, "t": normalise(sentence)})
    with store.unit_of_work() as uow:
        assert uow.embeddings.claim(MODEL, 3, limit=5, window_seconds=0, timeout_seconds=60) == []
    with store.unit_of_work() as uow:
        assert uow.conn.execute(text("SELECT count(*) FROM embedding_requests WHERE text_hash = :h"),
                                {"h": key}).scalar_one() == 0
        assert uow.embeddings.lookup(MODEL, 3, [key]) == {key: [1.0, 0.0, 0.0]}


def test_a_request_counts_the_texts_still_without_a_vector_and_queues_only_new_ones(store):
    """What an item's stage learns when it queues its texts (it wakes a batch only if some lack
    a vector): a stored text is neither queued nor counted; one another item queued already is
    counted once more but not queued twice."""
    tag = uuid.uuid4().hex
    stored, pending, new = f"stored {tag}", f"pending {tag}", f"new {tag}"
    keys = {text_key(normalise(t)): normalise(t) for t in (stored, pending, new)}
    with store.unit_of_work() as uow:
        item = _item(uow, tag)
        _stored(uow, MODEL, 3, {stored: [1.0, 0.0, 0.0]}, item)
        assert uow.embeddings.request(MODEL, 3, {text_key(pending): pending}) == 1
    with store.unit_of_work() as uow:
        uow.embeddings.reference(MODEL, 3, keys, item)
        assert uow.embeddings.request(MODEL, 3, keys) == 2
        assert uow.embeddings.request(MODEL, 3, {}) == 0
    with store.unit_of_work() as uow:  # and leave no request behind for the tests that count them
        queued = uow.conn.execute(text("DELETE FROM embedding_requests WHERE model = :m AND text LIKE :t"
                                       " RETURNING text"), {"m": MODEL, "t": f"% {tag}"}).scalars().all()
    assert sorted(queued) == [new, pending]


def test_claims_take_the_oldest_requests_first_and_a_second_batch_skips_the_locked_ones(store):
    """Requests are claimed in the order they were made (the item that asked first is the first
    whose vectors are all stored), shortest first among those of the same moment; a batch
    running meanwhile skips the rows another holds."""
    model = f"order-{uuid.uuid4().hex[:8]}"
    old = "an old and rather long request that waited since well before the others"
    older = "an older one"
    new = ["a much longer request sent at the same moment as the two short ones", "short", "a bit longer"]
    with store.unit_of_work() as uow:
        for body, age in [(older, 90.0), (old, 60.0)] + [(t, 0.0) for t in new]:
            uow.conn.execute(text("INSERT INTO embedding_requests (model, dimension, text_hash, text, requested_at)"
                                  " VALUES (:m, 3, :h, :t, now() - make_interval(secs => :age))"),
                             {"m": model, "h": text_key(body), "t": body, "age": age})
    try:
        with store.unit_of_work() as uow:
            first = [t for _, t in uow.embeddings.claim(model, 3, limit=3, window_seconds=0, timeout_seconds=60)]
            with store.unit_of_work() as other:  # a second batch meanwhile skips the locked rows
                second = [t for _, t in other.embeddings.claim(model, 3, limit=5, window_seconds=0,
                                                               timeout_seconds=60)]
    finally:  # nothing stores these texts: leave no request for other tests' "nothing pending"
        with store.unit_of_work() as uow:
            uow.conn.execute(text("DELETE FROM embedding_requests WHERE model = :m"), {"m": model})
    assert first == [older, old, "short"]
    assert second == ["a bit longer", new[0]]


def test_forget_drops_a_reuse_row_when_no_remaining_item_uses_it(store):
    shared, own = f"shared text {uuid.uuid4().hex}", f"own text {uuid.uuid4().hex}"
    with store.unit_of_work() as uow:
        first, second = _item(uow, "first"), _item(uow, "second")
        _stored(uow, MODEL, 2, {shared: [1.0, 0.0], own: [0.0, 1.0]}, first)
        uow.embeddings.reference(MODEL, 2, [text_key(shared)], second)
    with store.unit_of_work() as uow:
        uow.forget.forget_items([first])
    with store.unit_of_work() as uow:
        left = uow.embeddings.lookup(MODEL, 2, [text_key(shared), text_key(own)])
        assert set(left) == {text_key(shared)}  # the other item still uses the shared text
        uow.forget.forget_items([second])
    with store.unit_of_work() as uow:
        assert uow.embeddings.lookup(MODEL, 2, [text_key(shared)]) == {}


def _embedding_outputs(store, run_ids) -> list[dict]:
    with store.unit_of_work() as uow:
        return uow.conn.execute(text("SELECT output->'embedding' FROM stage_runs WHERE stage = 'embed_and_load'"
                                     " AND run_id = ANY(:r)"), {"r": list(run_ids)}).scalars().all()


def _chunk_vector(store, run_id) -> list[float]:
    with store.unit_of_work() as uow:
        return uow.conn.execute(text(
            "SELECT c.embedding::text FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN pipeline_runs r ON r.data_item_id = d.data_item_id WHERE r.id = :r"), {"r": run_id}).scalar_one()


def _vectors_stored(store) -> int:
    with store.unit_of_work() as uow:
        return uow.embeddings.counts()["vectors"]


def test_a_text_is_embedded_once_across_datasets_and_a_changed_text_gets_a_new_vector(client, store):
    tag = uuid.uuid4().hex[:8]
    content = f"Mira Castellan founded Saltmere Foods in Port Alder. Batch {tag}."
    stored = _vectors_stored(store)
    first = client.remember(content, dataset=f"a-{tag}", background=False)[0]
    assert first.status == "completed"
    assert _vectors_stored(store) > stored  # at least the chunk, whose text is new
    stored = _vectors_stored(store)
    again = client.remember(content, dataset=f"b-{tag}", background=False)[0]
    assert again.status == "completed"
    # The same document in another dataset: every text's vector is reused, nothing embedded.
    (after,) = _embedding_outputs(store, [again.run_id])
    assert after["reused"] == after["unique"] > 0 and after["embedded"] == 0
    assert _vectors_stored(store) == stored
    assert _chunk_vector(store, again.run_id) == _chunk_vector(store, first.run_id)

    changed = client.remember(content.replace("Port Alder", "Tessel River"), dataset=f"a-{tag}",
                              background=False)[0]
    assert changed.status == "completed"
    assert _vectors_stored(store) > stored
    assert _chunk_vector(store, changed.run_id) != _chunk_vector(store, first.run_id)


def test_work_waiting_sees_a_message_in_any_queue_but_embeds(services):
    """What a waiting load asks the broker: a message in any of the worker's queues but embed's
    (an empty Redis queue has no key at all, which is not an error)."""
    from engram.celery_app import app
    from engram.settings import get_settings
    from engram.tasks.embedding import work_waiting

    tag = uuid.uuid4().hex[:8]  # queues of this test's own: no other test's messages count
    settings = get_settings().model_copy(update={f"queue_{q}": f"probe-{q}-{tag}"
                                                 for q in ("ingest", "llm", "embed", "maintenance")})
    queues = settings.pipeline_queues  # as a pipeline worker consumes them

    def waiting_with_a_message_in(queue: str) -> bool:
        with app.connection_for_write() as conn:
            q = conn.SimpleQueue(queue, exchange_opts={"type": "direct"})  # as Celery declares its queues
            q.put({"probe": True})
            try:
                return work_waiting(settings, queues)
            finally:
                q.get(timeout=5).ack()
                q.close()

    assert work_waiting(settings, queues) is False
    # The last queue asked: the empty ones before it must not end the check.
    assert waiting_with_a_message_in(settings.queue_maintenance) is True
    assert waiting_with_a_message_in(settings.queue_embed) is False  # loads and batches: no reason to give way


def test_a_load_whose_texts_another_batch_holds_gives_its_worker_back_and_comes_again(worker_factory, store):
    """A load that finds its last texts in another batch's claim (nothing left for it to claim)
    waits in place while nothing else is queued; once other work waits for its worker it re-sends
    itself, comes again after ENGRAM_EMBED_GIVE_WAY_SECONDS, and the item loads once. Here this
    test's own transaction is that other batch."""
    from engram.adapters.store.engine import get_engine
    from engram.adapters.embed import get_embedder
    from engram.pipelines.cognify.chunk import chunk_for_embedder
    from engram.settings import get_settings

    # Batch tasks wait (a long window, a large minimum): only the items' own loads claim.
    fleet = worker_factory({"ENGRAM_EMBED_BATCH_WINDOW_SECONDS": "30", "ENGRAM_EMBED_BATCH_MIN": "5000"})
    tag = uuid.uuid4().hex[:8]
    content = f"Kestrel Labs opened a research office in Tromso in 2021. Give way test {tag}."
    settings = get_settings()
    chunk = normalise(chunk_for_embedder(content, settings.max_chunk_tokens, get_embedder(settings))[0].text)
    with store.unit_of_work() as uow:
        uow.conn.execute(text("INSERT INTO embedding_requests (model, dimension, text_hash, text)"
                              " VALUES (:m, 384, :h, :t)"), {"m": MODEL, "h": text_key(chunk), "t": chunk})

    def load_of(run_id) -> tuple:
        with store.unit_of_work() as uow:
            return uow.conn.execute(text("SELECT status, attempts, reason FROM stage_runs WHERE run_id = :r"
                                         " AND stage = 'embed_and_load'"), {"r": run_id}).one()

    def until(check, what: str):
        deadline = time.monotonic() + 90
        while not check() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert check(), what

    holder = get_engine().connect()
    try:
        holder.execute(text("SELECT 1 FROM embedding_requests WHERE model = :m AND text_hash = :h FOR UPDATE"),
                       {"m": MODEL, "h": text_key(chunk)})
        held = fleet.client.remember(dataset=f"giveway-{tag}", items=[{"text": content}], create_dataset=True)
        run_id = held.runs[0].run_id
        until(lambda: load_of(run_id)[:2] == ("running", 1), "the load never started")
        time.sleep(1.0)
        assert load_of(run_id)[:2] == ("running", 1)  # nothing queued: it waits in place
        other = fleet.client.remember(dataset=f"giveway-{tag}", items=[{"text": f"Another note {tag}."}])
        until(lambda: load_of(run_id)[1] == 2, f"the load did not give way and come again: {load_of(run_id)}")
    finally:
        holder.rollback()  # the other batch ends without storing: the waiting load claims the text
        holder.close()
    statuses = held.wait(timeout=120) + other.wait(timeout=120)
    assert [s.status for s in statuses] == ["completed", "completed"], [s.error for s in statuses]
    with store.unit_of_work() as uow:
        documents = uow.conn.execute(text("SELECT count(*) FROM documents d JOIN datasets s ON s.id = d.dataset_id"
                                          " WHERE s.name = :n"), {"n": f"giveway-{tag}"}).scalar()
        assert uow.embeddings.lookup(MODEL, 384, [text_key(chunk)])
    assert load_of(run_id)[:2] == ("completed", 2) and documents == 2


def _tagged(text: str, tag: str) -> str:
    """The text with every capitalised word suffixed by `tag`: new names, new summaries."""
    return " ".join(f"{w}{tag[:4]}" if w[:1].isupper() else w for w in text.split(" "))


def _batch_holder(store) -> int | None:
    """OS pid of a worker process inside an embedding batch (its claim transaction is open)."""
    with store.unit_of_work() as uow:
        name = uow.conn.execute(text(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'relation' AND l.relation = 'embedding_requests'::regclass"
            " AND l.mode = 'RowShareLock' AND a.state = 'idle in transaction'"
            " AND clock_timestamp() - a.state_change > interval '200 milliseconds'"
            " AND a.application_name LIKE 'engram:%' LIMIT 1")).scalar()
    return int(name.split(":")[1]) if name else None


def test_a_killed_embedding_batch_is_redelivered_and_every_item_loads_exactly_once(worker_factory, store):
    # A long window gathers every document's texts into one batch that takes a while to embed.
    fleet = worker_factory({"ENGRAM_EMBED_BATCH_WINDOW_SECONDS": "3", "ENGRAM_EMBED_BATCH_MAX": "5000"},
                           concurrency=2)
    dataset = f"kill-{uuid.uuid4().hex[:8]}"
    paths = sorted(DEMO.glob("*.md"))
    tag = uuid.uuid4().hex[:8]
    # Every name tagged: no text of the batch (chunks, summaries, entity names) was embedded by an
    # earlier test of the shared database (the demo test keeps the demo corpus), so the batch
    # holding them all takes long enough to be caught and killed.
    items = [{"text": _tagged(p.read_text(), tag) + f"\n\nKill test {tag}.", "name": p.name} for p in paths]
    handle = fleet.client.remember(dataset=dataset, items=items, create_dataset=True)
    deadline, victim = time.monotonic() + 300, None
    while victim is None and time.monotonic() < deadline:
        victim = _batch_holder(store)
        time.sleep(0.02)
    assert victim is not None, "no embedding batch was seen"
    os.kill(victim, signal.SIGKILL)

    statuses = handle.wait(timeout=600)
    assert [s.status for s in statuses] == ["completed"] * len(items), [s.error for s in statuses]
    with store.unit_of_work() as uow:
        dataset_id = uow.access.find_dataset(dataset, "default")
        counts = uow.graph.counts(dataset_id)
        missing = uow.conn.execute(text(
            "SELECT (SELECT count(*) FROM chunks WHERE dataset_id = :d AND embedding IS NULL)"
            " + (SELECT count(*) FROM summaries WHERE dataset_id = :d AND embedding IS NULL)"
            " + (SELECT count(*) FROM entities WHERE dataset_id = :d AND embedding IS NULL)"
            " + (SELECT count(*) FROM edges WHERE dataset_id = :d AND embedding IS NULL)"), {"d": dataset_id}).scalar()
        pending = uow.conn.execute(text("SELECT count(*) FROM embedding_requests")).scalar()
        loads = uow.conn.execute(text(
            "SELECT count(*) FILTER (WHERE status = 'completed') FROM stage_runs"
            " WHERE stage = 'embed_and_load' AND run_id = ANY(:r)"), {"r": [s.run_id for s in statuses]}).one()
    assert counts["documents"] == counts["data_items"] == len(items)
    assert missing == 0 and pending == 0
    assert loads[0] == len(items)
    outputs = _embedding_outputs(store, [s.run_id for s in statuses])
    with store.unit_of_work() as uow:
        keys = uow.conn.execute(text(
            "SELECT count(DISTINCT f.text_hash), count(DISTINCT v.text_hash) FROM embedding_refs f"
            " JOIN data_items i ON i.id = f.data_item_id LEFT JOIN embedding_vectors v ON v.model = f.model"
            " AND v.dimension = f.dimension AND v.text_hash = f.text_hash WHERE i.dataset_id = :d"), {"d": dataset_id}).one()
    # Every text the items use has its vector (the killed batch committed nothing; its texts
    # were claimed again by the next batch).
    assert keys[0] == keys[1] > 0
    assert all(o is not None for o in outputs)


def test_a_chunk_is_embedded_while_its_extraction_still_waits_on_the_llm(worker_factory, store, tmp_path):
    """The chunk's text (an item's longest) is queued for the fleet as soon as it is chunked, so
    it embeds during the LLM wait, under the embedder's own name even when the setting spells
    the model another way (a request under another spelling is one no batch ever claims)."""
    import json

    tag = uuid.uuid4().hex[:8]
    cassette = tmp_path / "slow.json"
    cassette.write_text(json.dumps({"version": 1, "entries": [{
        "contains": "", "response_model": "ChunkExtraction", "delay_seconds": 6,
        "response": {"graph": {"nodes": [], "edges": []},
                     "summary": {"summary": f"Slow {tag}.", "description": "summary"}}}]}))
    fleet = worker_factory({"ENGRAM_LLM_MODEL": f"replay:{cassette}",
                            "ENGRAM_EMBEDDING_MODEL": "local:sentence-transformers/all-MiniLM-L6-v2"},
                           concurrency=2)
    content = f"Quillon Varga repaired the lighthouse lens at Cape Orrin. Batch {tag}."
    handle = fleet.client.remember(content, dataset=f"early-{tag}", create_dataset=True)
    run_id = handle.runs[0].run_id

    def state() -> tuple[str | None, bool]:
        with store.unit_of_work() as uow:
            extract = uow.conn.execute(text(
                "SELECT status FROM stage_runs WHERE run_id = :r AND stage = 'extract_graph_and_summarize'"),
                {"r": run_id}).scalar()
            chunks = uow.runs.stage_output(run_id, "chunk") if extract else None
            if not chunks:
                return extract, False
            key = text_key(normalise(chunks["chunks"][0]["text"]))
            return extract, bool(uow.embeddings.lookup(MODEL, 384, [key]))

    deadline, seen = time.monotonic() + 120, (None, False)
    while time.monotonic() < deadline:
        seen = state()
        if seen[1] or seen[0] in ("completed", "failed"):
            break
        time.sleep(0.1)
    assert seen == ("running", True), f"extraction {seen[0]}, chunk vector stored: {seen[1]}"
    (status,) = handle.wait(timeout=120)
    assert status.status == "completed", status.error
    with store.unit_of_work() as uow:  # nothing left waiting under the setting's spelling
        assert uow.conn.execute(text(
            "SELECT count(*) FROM embedding_requests WHERE model LIKE '%sentence-transformers%'")).scalar_one() == 0
