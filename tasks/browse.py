"""engram.read / list / entity / graph / datasets (read grant) and engram.link (write grant):
browsing memory and linking two of its things by hand. Each checks who is asking: a dataset
name, an item id or an entity is not a capability (someone else's answers `does not exist`)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from engram.adapters.embed import get_embedder
from engram.adapters.store import Store
from engram.adapters.store.capture import object_chunk
from engram.models.payloads import (
    EntityDossier,
    EntityRequest,
    GraphRequest,
    GraphResult,
    LinkRequest,
    LinkResult,
    ListRequest,
    ListResult,
    ReadRequest,
    ReadResult,
)
from engram.pipelines import browse, ids
from engram.pipelines.errors import BadInput
from engram.settings import get_settings
from engram.tasks.base import engram_task


def _entity(uow, dataset: uuid.UUID, ref: str, dataset_name: str) -> dict:
    entity_id, name = browse.entity_ref(ref)
    found = uow.browse.entity(dataset, entity_id, name or None)
    if found is None:
        raise BadInput(f"no entity or object {ref!r} in dataset {dataset_name!r}")
    return found


def _facts(uow, rows: list[dict], anchor: uuid.UUID | None, now: datetime) -> list[dict]:
    intervals = uow.browse.intervals([r["id"] for r in rows])
    sources = uow.browse.chunk_sources(sorted({c for r in rows for c in r["provenance"] or ()}, key=str))
    return [browse.fact(r, now=now, anchor=anchor, intervals=intervals.get(r["id"], ()), sources=sources)
            for r in rows]


@engram_task("engram.read", payload=ReadRequest)
def read(self, req: ReadRequest) -> dict:
    now = datetime.now(UTC)
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        item = uow.browse.item(dataset, req.id)
        if item is None:
            raise BadInput(f"no object or document {req.id} in dataset {req.dataset!r}")
        page, more = browse.text_page(item["content"], req.offset, req.max_chars)
        is_object = item["object_id"] is not None
        links = _facts(uow, uow.browse.edges_touching(dataset, [req.id], 500), req.id, now) if is_object else []
        facts = _facts(uow, uow.browse.facts_of_chunks(dataset, uow.browse.chunk_ids(item["document_id"]), req.id,
                                                       req.facts_limit), None, now)
        chunks, total = uow.browse.chunks(item["document_id"], req.chunk_offset, req.chunks)
        mentions = uow.search.chunk_entities([dataset], [c["id"] for c in chunks]) if chunks else []
        return ReadResult(
            kind="object" if is_object else "document", id=req.id, dataset=req.dataset,
            title=item["title"] or item["name"], text=page, text_chars=len(item["content"]), next_offset=more,
            created_at=item["created_at"], node_sets=list(item["node_sets"] or []), doc_type=item["doc_type"],
            object=uow.browse.object_row(req.id) if is_object else None, links=links, facts=facts,
            chunks=browse.chunk_views(chunks, mentions), chunks_total=total if req.chunks else None,
            next_chunk_offset=browse.next_offset(req.chunk_offset, len(chunks), total) if req.chunks else None,
        ).model_dump(mode="json")


@engram_task("engram.list", payload=ListRequest)
def list_items(self, req: ListRequest) -> dict:
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        if req.kind == "objects":
            items, total = uow.browse.objects(dataset, type=req.type, project=req.project, tag=req.tag,
                                              offset=req.offset, limit=req.limit)
        else:
            items, total = uow.browse.documents(dataset, type=req.type, node_set=req.tag, offset=req.offset,
                                                limit=req.limit)
    return ListResult(dataset=req.dataset, kind=req.kind, items=items, total=total,
                      next_offset=browse.next_offset(req.offset, len(items), total)).model_dump(mode="json")


@engram_task("engram.entity", payload=EntityRequest)
def entity(self, req: EntityRequest) -> dict:
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        found = _entity(uow, dataset, req.entity, req.dataset)
        rows = uow.browse.edges_touching(dataset, [found["id"]], req.limit + 1)
        kept = rows[:req.limit]
        conflicts = uow.browse.contradictions(dataset, [found["id"], *(r["id"] for r in kept)])
        texts = uow.browse.edge_texts(sorted({e for c in conflicts for e in (c["source_id"], c["target_id"])},
                                             key=str))
        texts |= uow.capture.titles(sorted({e for c in conflicts for e in (c["source_id"], c["target_id"])}
                                           - set(texts), key=str))
        intervals = uow.browse.intervals([r["id"] for r in kept])
        sources = uow.browse.chunk_sources(sorted({c for r in kept for c in r["provenance"] or ()}, key=str))
    out = browse.dossier(found, rows, limit=req.limit, intervals=intervals, sources=sources,
                         contradictions=conflicts, texts=texts)
    return EntityDossier(dataset=req.dataset, **out).model_dump(mode="json")


@engram_task("engram.graph", payload=GraphRequest)
def graph(self, req: GraphRequest) -> dict:
    now = datetime.now(UTC)
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        root = _entity(uow, dataset, req.entity, req.dataset)
        depths, rows, truncated = browse.neighbourhood(
            root["id"], lambda nodes, k: uow.browse.edges_touching(dataset, nodes, k,
                                                                   current_only=not req.include_history),
            depth=req.depth, limit=req.limit)
        types = uow.browse.entity_types(list(depths))
    names = {root["id"]: root["name"]}
    for r in rows:
        names.setdefault(r["source_id"], r["source_name"])
        names.setdefault(r["target_id"], r["target_name"])
    nodes = [{"id": n, "name": names.get(n), "type": types.get(n), "depth": d}
             for n, d in sorted(depths.items(), key=lambda kv: (kv[1], names.get(kv[0]) or ""))]
    edges = [browse.fact(r, now=now) for r in rows]
    return GraphResult(dataset=req.dataset, root=root["id"], nodes=nodes, edges=edges,
                       truncated=truncated).model_dump(mode="json")


@engram_task("engram.link", payload=LinkRequest)
def link(self, req: LinkRequest) -> dict:
    """A typed edge between two things of the dataset, origin `caller`; linking again updates it."""
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        source = _entity(uow, dataset, req.source, req.dataset)
        target = _entity(uow, dataset, req.target, req.dataset)
        objects = uow.capture.titles([source["id"], target["id"]])
        # An end that is a captured object lends its chunk: forgetting the object forgets the link.
        provenance = [object_chunk(o) for o in (source["id"], target["id"]) if o in objects]
        row = browse.link_row(dataset, source, target, req.predicate, user=req.user, confidence=req.confidence,
                              note=req.note, provenance=provenance)
        vectors = {row["id"]: list(get_embedder(get_settings()).embed([row["edge_text"]])[0])}
        created = not uow.browse.edge_exists(row["id"])
        uow.capture.upsert_edges(dataset, [row], provenance, vectors)
    return LinkResult(status="linked", dataset=req.dataset, edge_id=row["id"], predicate=req.predicate,
                      source_id=source["id"], target_id=target["id"], text=row["edge_text"],
                      created=created).model_dump(mode="json")
