"""Loads that name the same stored entity do not wait for each other, and the entity keeps the
first description and vector (issue 10: two pipeline processes loading documents that share a
popular entity used to serialise on its row lock until the first load committed)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from engram.pipelines import ids
from engram.pipelines.cognify.extract import EntityRow, EntityTypeRow, GraphDraft

DIM = 384


def _draft(dataset: uuid.UUID, description: str) -> tuple[GraphDraft, uuid.UUID]:
    type_id = ids.entity_type_id(dataset, "company")
    entity = ids.entity_id(dataset, "Harbor Dynamics")
    return GraphDraft([EntityRow(entity, "Harbor Dynamics", type_id, "company", description)],
                      [EntityTypeRow(type_id, "company")], [], []), entity


def _load(uow, dataset: uuid.UUID, content: str, description: str, vector: list[float] | None) -> uuid.UUID:
    (item, _), = uow.graph.add_items(dataset, [{"digest": ids.content_hash(content.encode()), "content": content,
                                                "name": None, "mime": "text/plain", "source": None}])
    draft, entity = _draft(dataset, description)
    uow.graph.load_document(dataset=dataset, item=item, document=ids.document_id(item), doc_type="text",
                            title=None, chunk_rows=[], draft=draft,
                            vectors={entity: vector} if vector is not None else {})
    return entity


def _entity(store, entity: uuid.UUID) -> tuple[str, list[float] | None]:
    with store.unit_of_work() as uow:
        row = uow.conn.execute(text("SELECT description, embedding IS NULL, (embedding::real[])[1]"
                                    " FROM entities WHERE id = :e"), {"e": entity}).one()
    return row[0], None if row[1] else row[2]


@pytest.fixture
def dataset(store, dataset_name):
    with store.unit_of_work() as uow:
        return uow.access.create_dataset("default", dataset_name)


def test_loads_naming_a_stored_entity_do_not_wait_for_each_other(store, dataset):
    with store.unit_of_work() as uow:
        entity = _load(uow, dataset, "Harbor Dynamics builds robots.", "a robot maker", [0.25] * DIM)
    with store.unit_of_work() as first:  # a load naming the entity, not yet committed
        _load(first, dataset, "Harbor Dynamics hired Alice.", "an employer", [0.5] * DIM)
        with store.unit_of_work() as second:
            # Waiting for `first` to commit would raise LockNotAvailable after 2 s.
            second.conn.execute(text("SET LOCAL lock_timeout = '2s'"))
            _load(second, dataset, "Harbor Dynamics opened a plant.", "a manufacturer", [0.75] * DIM)
    assert _entity(store, entity) == ("a robot maker", 0.25)  # the first description and vector stay


def test_an_entity_stored_without_description_or_vector_takes_a_later_documents(store, dataset):
    with store.unit_of_work() as uow:
        entity = _load(uow, dataset, "Harbor Dynamics.", "", None)
    assert _entity(store, entity) == ("", None)
    with store.unit_of_work() as uow:
        _load(uow, dataset, "Harbor Dynamics builds robots.", "a robot maker", [0.25] * DIM)
    assert _entity(store, entity) == ("a robot maker", 0.25)
    with store.unit_of_work() as uow:
        _load(uow, dataset, "Harbor Dynamics hired Alice.", "an employer", [0.5] * DIM)
    assert _entity(store, entity) == ("a robot maker", 0.25)
