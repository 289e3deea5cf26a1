"""Cognify as chained Celery tasks: remember (add) → classify → chunk → extract → embed_and_load.

Each task is thin: validate → load inputs from Postgres → call the pure pipeline → persist.
Every stage task takes only a run id; its inputs are the previous stages' persisted outputs,
so a retried or resumed run starts at the first unfinished stage.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from celery import chain, chord, group
from pydantic import BaseModel

from engram.adapters.embed import get_embedder
from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.redis_client import get_redis
from engram.adapters.results import purge_quoting
from engram.adapters.store import Store
from engram.adapters.store.access import require_run
from engram.models.graph import ChunkExtraction, KnowledgeGraph, SummarizedContent
from engram.models.payloads import (
    ForgetRequest,
    ForgetResult,
    RememberRequest,
    RememberResult,
    RetryRequest,
    RunRef,
    StatusRequest,
)
from engram.pipelines import ids
from engram.pipelines.backpressure import RATE_WINDOW_SECONDS, backlog
from engram.pipelines.cognify import pipeline
from engram.pipelines.cognify.chunk import chunk_text
from engram.pipelines.cognify.classify import classify as classify_type
from engram.pipelines.cognify.embedding import request_vectors, texts_to_embed, vectors_for
from engram.pipelines.cognify.extract import build_graph
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.prompts import extraction as prompts
from engram.settings import get_settings
from engram.tasks.base import InvalidPayload, engram_task, execute_stage
from engram.tasks.embedding import count_embedded, embed_policy, schedule_batch
from engram.tasks.status import run_status


class StageRequest(BaseModel):
    run_id: uuid.UUID


def _stage_options() -> dict:
    return {"payload": StageRequest, "max_retries": get_settings().task_max_retries}


# ------------------------------------------------------------------ producer-facing tasks


@engram_task("engram.remember", payload=RememberRequest)
def remember(self, req: RememberRequest) -> dict:
    """Add every item (dedupe by content hash), create its run, commit, then enqueue cognify."""
    if req.session_id is not None:  # a session turn: stored at once, improved separately (SPEC 6)
        from engram.tasks.sessions import store_session_entry

        return store_session_entry(req, self.request.id)
    settings = get_settings()
    prepared = [prepare(item, settings.max_content_bytes, i) for i, item in enumerate(req.items)]
    store = Store()
    refs: list[RunRef] = []
    to_start: list[tuple[uuid.UUID, list[str]]] = []
    with store.unit_of_work() as uow:
        if req.create_dataset and uow.access.find_own(req.dataset, req.user) is None:
            uow.access.create_dataset(req.user, req.dataset)
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        ahead = uow.runs.open_count()
        options = req.options.model_dump(exclude_none=True)
        added = uow.graph.add_items(
            dataset, [{"digest": i.digest, "content": i.text, "name": i.name, "mime": i.mime, "source": i.source}
                      for i in prepared], node_sets=req.node_sets, importance=req.importance)
        new_runs: list[dict] = []
        started_here: dict[uuid.UUID, uuid.UUID] = {}  # item -> the run this call created for it
        for item, (item_id, created) in zip(prepared, added):
            if not created:
                if item_id in started_here:  # the same content twice in one call: one run
                    refs.append(RunRef(run_id=started_here[item_id], data_item_id=item_id, name=item.name,
                                       duplicate=True, status="pending"))
                    continue
                previous = uow.runs.latest_for_item(item_id)
                if previous is not None and previous["status"] == "pending" and self.request.retries:
                    # This remember is a retry: its first attempt may have committed the run and
                    # then failed to enqueue it. Enqueue again (stages are idempotent).
                    to_start.append((previous["id"], [s["stage"] for s in uow.runs.stages(previous["id"])
                                                      if s["status"] == "pending"]))
                if previous is not None and previous["status"] != "failed":
                    refs.append(RunRef(run_id=previous["id"], data_item_id=item_id, name=item.name,
                                       duplicate=True, status=previous["status"]))
                    continue
                if previous is not None:  # the same content again after a failure: retry that run
                    to_start.append((previous["id"], uow.runs.reopen(previous["id"])))
                    refs.append(RunRef(run_id=previous["id"], data_item_id=item_id, name=item.name,
                                       duplicate=True, status="pending"))
                    continue
            run_id = uuid.uuid4()
            stages = pipeline.stages_for(options)
            new_runs.append({"id": run_id, "pipeline": "cognify", "stages": stages, "dataset": dataset,
                             "data_item": item_id,
                             "params": {"options": options, "doc_type": item.doc_type, "name": item.name},
                             "done": {stages[0]: {"data_item_id": str(item_id), "duplicate": not created}}})
            started_here[item_id] = run_id
            to_start.append((run_id, stages[1:]))
            refs.append(RunRef(run_id=run_id, data_item_id=item_id, name=item.name, status="pending"))
        uow.runs.create_many(new_runs)
        bound = settings.accept_backlog_bound
        pressure = backlog(ahead, uow.runs.finished_since(RATE_WINDOW_SECONDS) if ahead > bound else 0,
                           len(to_start), bound)
    # Enqueue only after the rows are committed.
    enqueue_runs(to_start)
    return RememberResult(status="accepted", dataset=req.dataset, runs=refs, **(pressure or {})).model_dump(mode="json")


@engram_task("engram.cognify", payload=RetryRequest)
def cognify(self, req: RetryRequest) -> dict:
    """Retry a run: completed stages stay completed; the chain starts at the first unfinished one."""
    with Store().unit_of_work() as uow:
        run = uow.runs.lock(req.run_id)
        require_run(uow, run, req.run_id, req.user, "write")
        if run["status"] == "forgotten":
            raise BadInput(f"run {req.run_id} was forgotten: remember the content again instead")
        failed_passes = [s for s in uow.runs.stages(req.run_id) if s["status"] == "failed"]
        if run["status"] == "completed" and not failed_passes:
            return {"run_id": str(req.run_id), "status": "completed", "stages": []}
        # A completed run may still hold a failed optional pass (contradictions, supersession).
        stages = uow.runs.reopen(req.run_id)
    start_runs([(req.run_id, stages)])
    return {"run_id": str(req.run_id), "status": "pending", "stages": stages}


@engram_task("engram.status", payload=StatusRequest)
def status(self, req: StatusRequest) -> dict:
    return run_status(req).model_dump(mode="json")


@engram_task("engram.forget", payload=ForgetRequest)
def forget(self, req: ForgetRequest) -> dict:
    """Remove every copy of an item (or of the whole dataset); its runs become `forgotten` tombstones."""
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "delete")
        if req.data_item_id is not None:
            item = uow.graph.item(req.data_item_id)
            if item is None or item["dataset_id"] != dataset:
                raise BadInput(f"data item {req.data_item_id} is not in dataset {req.dataset!r}")
            counts, rewritten = uow.forget.forget_items([req.data_item_id])
        else:
            counts, rewritten = uow.forget.forget_dataset(dataset)
        if rewritten:  # a kept fact's vector embedded the forgotten description: embed what is left
            vectors = get_embedder(get_settings()).embed([t for _, t in rewritten])
            uow.forget.set_edge_embeddings({e: v for (e, _), v in zip(rewritten, vectors)})
        # Task results quoting what went (a recall's chunks, an accept's payload): before the
        # commit, so a Redis error rolls the forget back and its retry does both.
        purge_quoting(get_redis(), uow.forget.removed_texts)
    return ForgetResult(**counts).model_dump()


# ------------------------------------------------------------------ canvas


STAGE_TASKS: dict[str, str] = {
    "classify": "engram.cognify.classify",
    "chunk": "engram.cognify.chunk",
    "extract_graph_and_summarize": "engram.cognify.extract_graph_and_summarize",
    "embed_and_load": "engram.cognify.embed_and_load",
    "contradiction_check": "engram.maintenance.contradiction_check",
    "temporal_supersession": "engram.maintenance.temporal_supersession",
}


def run_chain(run_id: uuid.UUID, stages: list[str]):
    from engram.celery_app import app

    return chain(*(app.signature(STAGE_TASKS[s], kwargs={"run_id": str(run_id)}, immutable=True) for s in stages))


def start_runs(runs: list[tuple[uuid.UUID, list[str]]]) -> None:
    """One chain per item; several items form a group with a completion callback."""
    from engram.celery_app import app

    runs = [(r, s) for r, s in runs if s]
    if not runs:
        return
    if len(runs) == 1:
        run_chain(*runs[0]).apply_async()
        return
    callback = app.signature("engram.cognify.finish_dataset", kwargs={"run_ids": [str(r) for r, _ in runs]},
                             immutable=True)
    chord(group(run_chain(r, s) for r, s in runs))(callback)


class StartRequest(BaseModel):
    runs: list[tuple[uuid.UUID, list[str]]]


def enqueue_runs(runs: list[tuple[uuid.UUID, list[str]]]) -> None:
    """An accept's enqueue: one chain is one message anyway; several go as one `start` message
    that a pipeline worker expands, so accepting a batch costs one publish, not one per item."""
    from engram.celery_app import app

    runs = [(r, s) for r, s in runs if s]
    if len(runs) <= 1:
        start_runs(runs)
        return
    app.send_task("engram.cognify.start", kwargs={"runs": [[str(r), s] for r, s in runs]})


@engram_task("engram.cognify.start", payload=StartRequest)
def start(self, req: StartRequest) -> dict:
    """Enqueue the chains of runs an accept committed (signed by Engram: internal only)."""
    start_runs(req.runs)
    return {"runs": len(req.runs)}


@engram_task("engram.cognify.finish_dataset")
def finish_dataset(self, run_ids: list[str]) -> dict:
    with Store().unit_of_work() as uow:
        statuses = [uow.runs.get(uuid.UUID(r)) for r in run_ids]
    done = sum(1 for s in statuses if s and s["status"] == "completed")
    return {"runs": len(run_ids), "completed": done, "failed": len(run_ids) - done}


# ------------------------------------------------------------------ stages


def _draft(item_id: uuid.UUID, dataset: uuid.UUID, chunks: list[dict], extractions: list[dict],
           importance: float = 0.5, title: str | None = None):
    """An item's document id, chunk rows and graph rows from its persisted stage outputs."""
    document = ids.document_id(item_id)
    chunk_rows = [dict(c, id=ids.chunk_id(document, c["index"]), importance=importance) for c in chunks]
    draft = build_graph(dataset, [(c["id"], c["text"]) for c in chunk_rows],
                        [ChunkExtraction.model_validate(e) for e in extractions], title=title)
    return document, chunk_rows, draft


def _item_of(uow, run_id: uuid.UUID) -> tuple[dict, dict]:
    run = uow.runs.get(run_id)
    item = uow.graph.item(run["data_item_id"])
    if item is None:
        raise BadInput(f"data item of run {run_id} was forgotten before cognify finished")
    return run, item


@engram_task("engram.cognify.classify", **_stage_options())
def classify(self, req: StageRequest) -> dict:
    def load(uow):
        return _item_of(uow, req.run_id)

    def compute(inputs):
        run, item = inputs
        doc_type = run["params"].get("doc_type") or classify_type(item["name"], item["mime"], item["content"].encode())
        title = item["name"] or item["content"].strip().splitlines()[0][:200]
        return {"doc_type": doc_type, "title": title}

    return execute_stage(self, req.run_id, "classify", load=load, compute=compute)


@engram_task("engram.cognify.chunk", **_stage_options())
def chunk(self, req: StageRequest) -> dict:
    settings = get_settings()

    def load(uow):
        return _item_of(uow, req.run_id)[1]["content"]

    def compute(text):
        drafts = chunk_text(text, settings.max_chunk_tokens)
        return {"chunks": [{"index": c.index, "text": c.text, "token_count": c.token_count,
                            "cut_type": c.cut_type} for c in drafts]}

    return execute_stage(self, req.run_id, "chunk", load=load, compute=compute)


def extract_one(gateway, mode: str, text: str) -> ChunkExtraction:
    """One chunk's graph and summary: one LLM call by default, two in the reference's mode."""
    if mode == "two_call":
        graph = gateway.structured(prompts.extract_graph(text), KnowledgeGraph, subject=text)
        summary = gateway.structured(prompts.summarize(text), SummarizedContent, subject=text)
        return ChunkExtraction(graph=graph, summary=summary)
    return gateway.structured(prompts.extract_chunk(text), ChunkExtraction, subject=text)


@engram_task("engram.cognify.extract_graph_and_summarize", **_stage_options())
def extract_graph_and_summarize(self, req: StageRequest) -> dict:
    settings = get_settings()

    def load(uow):
        return uow.runs.get(req.run_id), uow.runs.stage_output(req.run_id, "chunk")["chunks"]

    def compute(inputs):
        import contextvars

        gateway = gateway_from_settings(settings)
        texts = [c["text"] for c in inputs[1]]
        with ThreadPoolExecutor(max_workers=settings.llm_concurrency) as pool:
            futures = [pool.submit(contextvars.copy_context().run, extract_one, gateway, settings.extraction_mode, t)
                       for t in texts]
            results = [f.result() for f in futures]
        return {"extractions": [r.model_dump() for r in results]}

    requested = []

    def persist(uow, inputs, output):
        # The texts to embed are known now: queue them so batches run while items wait here.
        run, chunks = inputs
        _, chunk_rows, draft = _draft(run["data_item_id"], run["dataset_id"], chunks, output["extractions"],
                                      title=uow.runs.stage_output(req.run_id, "classify")["title"])
        requested.append(request_vectors([t for _, t in texts_to_embed(chunk_rows, draft)], run["data_item_id"],
                                         embeddings=uow.embeddings, model=settings.embedding_model,
                                         dimension=settings.embedding_dimension))
        return output

    result = execute_stage(self, req.run_id, "extract_graph_and_summarize", load=load, compute=compute,
                           persist=persist)
    if any(requested):
        schedule_batch()
    return result


@engram_task("engram.cognify.embed_and_load", **_stage_options())
def embed_and_load(self, req: StageRequest) -> dict:
    settings = get_settings()

    def load(uow):
        run, item = _item_of(uow, req.run_id)
        return {
            "run": run,
            "item": item,
            "classified": uow.runs.stage_output(req.run_id, "classify"),
            "chunks": uow.runs.stage_output(req.run_id, "chunk")["chunks"],
            "extractions": uow.runs.stage_output(req.run_id, "extract_graph_and_summarize")["extractions"],
        }

    def compute(inputs):
        item = inputs["item"]
        document, chunk_rows, draft = _draft(item["id"], item["dataset_id"], inputs["chunks"], inputs["extractions"],
                                             item["importance"], title=inputs["classified"]["title"])
        # The item's texts come from the fleet's shared batches; stored vectors are reused.
        keyed = texts_to_embed(chunk_rows, draft)
        started = time.perf_counter()
        embedder = get_embedder(settings)
        vectors, stats = vectors_for([t for _, t in keyed], item["id"], store=Store(), embedder=embedder,
                                     policy=embed_policy(settings))
        count_embedded(embedder.name, stats.embedded)
        return {"document": document, "chunk_rows": chunk_rows, "draft": draft,
                "vectors": {k: v for (k, _), v in zip(keyed, vectors)},
                "embedding": dict(stats.as_dict(), seconds=round(time.perf_counter() - started, 3))}

    def persist(uow, inputs, result):
        counts = uow.graph.load_document(
            dataset=inputs["item"]["dataset_id"], item=inputs["item"]["id"], document=result["document"],
            doc_type=inputs["classified"]["doc_type"], title=inputs["classified"]["title"],
            chunk_rows=result["chunk_rows"], draft=result["draft"], vectors=result["vectors"],
        )
        # What later passes (contradictions, supersession) need to find this item's graph.
        return {"counts": counts, "embedding": result["embedding"],
                "touched_entities": sorted({str(e.id) for e in result["draft"].entities}),
                "chunk_ids": [str(c["id"]) for c in result["chunk_rows"]]}

    return execute_stage(self, req.run_id, "embed_and_load", load=load, compute=compute, persist=persist)
