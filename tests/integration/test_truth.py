"""Truth subspace over real Postgres + pgvector and the real embedder: centroids, chunk stamps
(epoch AND signature), the reader's check, and the truth factor in hybrid recall."""

from __future__ import annotations

import uuid

from improve_helpers import dataset_id, rows, scalar
from sqlalchemy import text

from engram.adapters.embed import get_embedder
from engram.models.payloads import RecallRequest
from engram.pipelines.improve import distill, truth
from engram.settings import get_settings
from engram.tasks.recall import recall_query

LESSON = "Production deploys always need the ops team's written sign-off before release."
ALIGNED = "Release notes: the ops team signs off every production deploy in writing before the release."
UNALIGNED = "Release notes: the marketing team drafts every product launch announcement before the release."


def _lesson(store, ds, session: str, statement: str, item_id) -> None:
    vector = get_embedder(get_settings()).embed([statement])[0]
    with store.unit_of_work() as uow:
        uow.learning.add_lesson(lesson_id=distill.lesson_id(ds, statement), dataset_id=ds, session_id=session,
                                statement=statement, why_learned="test", entities=[], member_entry_ids=[],
                                data_item_id=item_id, run_id=None, vector=vector)


def _build(store, ds) -> dict:
    ports = truth.RepositoryTruthPorts(store.unit_of_work, store.unit_of_work)
    return truth.build(ports, get_embedder(get_settings()).embed, ds)


def _hybrid(user, dataset, question):
    return recall_query(RecallRequest(question=question, datasets=[dataset], user=user,
                                      search_type="HYBRID_COMPLETION", top_k=10))


def test_lessons_lift_an_aligned_chunk_and_an_abandoned_basis_is_refused(client, store, dataset_name):
    user = f"u-{uuid.uuid4().hex[:6]}"
    client.remember(dataset=dataset_name, user=user, background=False,
                    items=[{"text": ALIGNED, "name": "aligned.md"}, {"text": UNALIGNED, "name": "unaligned.md"}])
    lesson_text = distill.render_lesson("s1", LESSON, "user confirmed")
    (published,) = client.remember(dataset=dataset_name, user=user, background=False, node_sets=distill.node_sets("s1"),
                                   items=[{"text": lesson_text, "name": "lesson.md"}])
    ds = dataset_id(store, dataset_name)
    item = scalar(store, "SELECT id FROM data_items WHERE dataset_id = :d AND name = 'lesson.md'", d=ds)
    question = "What happens before the release?"
    before = {i.provenance.title: i.score for i in _hybrid(user, dataset_name, question).items}

    _lesson(store, ds, "s1", LESSON, item)
    with store.unit_of_work() as uow:
        assert uow.learning.truth_due([ds]) == [ds]
    built = _build(store, ds)
    assert built["status"] == "completed" and built["epoch"] == 1 and built["learnings"] == 1
    stamps = rows(store, "SELECT truth_epoch, truth_signature, array_length(truth_alignment, 1) AS k"
                  " FROM chunks WHERE dataset_id = :d", d=ds)
    sig = truth.signature([truth.learning_id(truth.normalise(LESSON))])
    assert stamps and all((s["truth_epoch"], s["truth_signature"], s["k"]) == (1, sig, truth.K) for s in stamps)
    with store.unit_of_work() as uow:
        assert uow.learning.truth_due([ds]) == []  # debounced: nothing changed
    assert _build(store, ds)["status"] == "already_completed"

    after = {i.provenance.title: i.score for i in _hybrid(user, dataset_name, question).items}
    lift = {t: after[t] / before[t] for t in ("aligned.md", "unaligned.md")}
    assert all(0.75 <= v <= 1.25 for v in lift.values())
    assert lift["aligned.md"] > lift["unaligned.md"]
    # The lesson's direction puts the aligned note first. (Without truth the two equally similar
    # notes may tie or come either way round: how far ahead the graph lane's strengths put one is
    # the fusion's business; the lift above is what truth adds.)
    assert after["aligned.md"] > after["unaligned.md"]
    assert after["aligned.md"] / after["unaligned.md"] > before["aligned.md"] / before["unaligned.md"]

    # An abandoned build's stamp at the live epoch but another basis: the reader refuses it.
    with store.unit_of_work() as uow:
        uow.conn.execute(text("UPDATE chunks c SET truth_alignment = array_fill(1.0::float8, ARRAY[8]),"
                              " truth_signature = :s FROM documents d, data_items i WHERE d.id = c.document_id"
                              " AND i.id = d.data_item_id AND i.name = 'unaligned.md'"), {"s": "f" * 64})
    stale = {i.provenance.title: i.score for i in _hybrid(user, dataset_name, question).items}
    assert stale["unaligned.md"] == before["unaligned.md"]  # neutral, not boosted by the stale 1.0s
    with store.unit_of_work() as uow:
        assert uow.learning.truth_due([ds]) == [ds]
    assert _build(store, ds)["chunks_stamped"] == 1  # and the next build redoes it


def test_node_set_filter_and_lesson_provenance(client, store, dataset_name):
    user = f"u-{uuid.uuid4().hex[:6]}"
    client.remember(dataset=dataset_name, user=user, background=False, items=[{"text": ALIGNED, "name": "notes.md"}])
    (published,) = client.remember(dataset=dataset_name, user=user, background=False, node_sets=distill.node_sets("s7"),
                                   items=[{"text": distill.render_lesson("s7", LESSON, "user said"), "name": "l.md"}])
    ds = dataset_id(store, dataset_name)
    item = scalar(store, "SELECT id FROM data_items WHERE dataset_id = :d AND name = 'l.md'", d=ds)
    _lesson(store, ds, "s7", LESSON, item)
    result = recall_query(RecallRequest(question="Who signs off production deploys?", datasets=[dataset_name],
                                        user=user, search_type="CHUNKS", node_sets=["session_learnings:s7"]))
    assert [i.provenance.title for i in result.items] == ["l.md"]
    assert result.items[0].provenance.lesson.session_id == "s7"
    everything = recall_query(RecallRequest(question="Who signs off production deploys?", datasets=[dataset_name],
                                            user=user, search_type="CHUNKS"))
    assert {i.provenance.title for i in everything.items} == {"l.md", "notes.md"}
