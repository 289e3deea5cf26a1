"""The cognify flow: add → classify → chunk → extract_graph_and_summarize → embed_and_load
[→ contradiction_check] [→ temporal_supersession]. Declared once here (pipelines/flow.py).

Every stage takes only a run id; its inputs are the item and the earlier stages' persisted
outputs, so a retried or resumed run starts at the first unfinished stage. "add" is recorded
by the accepting task (remember) in the transaction that stores the item.
"""

from __future__ import annotations

import contextvars
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from engram.models.graph import ChunkExtraction, KnowledgeGraph, SummarizedContent
from engram.pipelines import ids
from engram.pipelines.cognify.chunk import chunk_budget, chunk_text
from engram.pipelines.cognify.classify import classify as classify_type
from engram.pipelines.cognify.conversation import CONVERSATION, chunk_conversation, conversation_chunk_row
from engram.pipelines.cognify.conversation import conversation_title
from engram.pipelines.cognify.conversation import parse as parse_conversation
from engram.pipelines.cognify.embedding import request_vectors, texts_to_embed
from engram.pipelines.cognify.windows import spans
from engram.pipelines.cognify.extract import build_graph
from engram.pipelines.errors import BadInput
from engram.pipelines.flow import Flow, Stage
from engram.pipelines.maintenance.flow import CONTRADICTION_CHECK, TEMPORAL_SUPERSESSION
from engram.prompts import extraction as prompts


def _item(uow, ctx) -> dict:
    item = uow.graph.item(ctx.run["data_item_id"])
    if item is None:
        raise BadInput(f"data item of run {ctx.run_id} was forgotten before cognify finished")
    return item


def document_draft(item_id: uuid.UUID, dataset: uuid.UUID, chunks: list[dict], extractions: list[dict],
           importance: float = 0.5, title: str | None = None, intervals: bool = True):
    """An item's document id, chunk rows and graph rows from its persisted stage outputs."""
    document = ids.document_id(item_id)
    chunk_rows = [dict(c, id=ids.chunk_id(document, c["index"]), importance=importance) for c in chunks]
    draft = build_graph(dataset, [(c["id"], c["text"]) for c in chunk_rows],
                        [ChunkExtraction.model_validate(e) for e in extractions], title=title, intervals=intervals,
                        contexts=[c.get("conversation") and c for c in chunks])
    return document, chunk_rows, draft


# ------------------------------------------------------------------ classify


def load_classify(uow, ctx) -> dict:
    return _item(uow, ctx)


def compute_classify(item: dict, ctx) -> dict:
    return classified(item, ctx.run["params"].get("doc_type"))


def classified(item: dict, doc_type: str | None = None) -> dict:
    """An item's type (unless given) and its document's title (benches call this too)."""
    doc_type = doc_type or classify_type(item["name"], item["mime"], item["content"].encode())
    if doc_type == CONVERSATION:
        return {"doc_type": doc_type, "title": item["name"] or conversation_title(item["content"])}
    title = item["name"] or item["content"].strip().splitlines()[0][:200]
    return {"doc_type": doc_type, "title": title}


# ------------------------------------------------------------------ chunk


def load_chunk(uow, ctx) -> dict:
    classified = uow.runs.stage_output(ctx.run_id, CLASSIFY.name)
    return {"text": _item(uow, ctx)["content"], "doc_type": classified["doc_type"]}


def chunk_rows(text: str, doc_type: str, max_chunk_tokens: int, embedder) -> list[dict]:
    """An item's chunks as the chunk stage persists them (benches and tests call this too): a
    conversation's whole turns with their session data, any other text by paragraphs and
    sentences; both in the embedder's own tokens (chunk_budget)."""
    limit, counter = chunk_budget(max_chunk_tokens, embedder)
    if doc_type == CONVERSATION and (conversation := parse_conversation(text)) is not None:
        return [conversation_chunk_row(c) for c in chunk_conversation(conversation, limit, counter)]
    return [{"index": c.index, "text": c.text, "token_count": c.token_count, "cut_type": c.cut_type}
            for c in chunk_text(text, limit, counter)]


def compute_chunk(inputs: dict, ctx) -> dict:
    return {"chunks": chunk_rows(inputs["text"], inputs["doc_type"], ctx.settings.max_chunk_tokens,
                                 ctx.ports.embedder())}


def persist_chunk(uow, ctx, inputs: dict, output: dict) -> dict:
    # The chunks' own texts are known now: queue them, so the fleet embeds them (the item's
    # longest, costliest texts) while its extraction waits on the LLM; a conversation's turn
    # windows too.
    _queue_vectors(uow, ctx, [t for c in output["chunks"] for t in (c["text"], *(w[2] for w in spans(c)))])
    return output


def _queue_vectors(uow, ctx, texts: list[str]) -> None:
    """Queue an item's texts for the fleet's embedding batches; wake a batch once committed.
    Keyed by the embedder's own name, which the batches claim by (the setting may spell it
    another way: `local:sentence-transformers/all-MiniLM-L6-v2`)."""
    embedder = ctx.ports.embedder()
    if request_vectors(texts, ctx.run["data_item_id"], embeddings=uow.embeddings,
                       model=embedder.name, dimension=embedder.dimension):
        ctx.after_commit(ctx.ports.schedule_embedding)


# ------------------------------------------------------------------ extract_graph_and_summarize


def extract_one(gateway, mode: str, text: str) -> ChunkExtraction:
    """One chunk's graph and summary: one LLM call by default, two in the reference's mode."""
    if mode == "two_call":
        graph = gateway.structured(prompts.extract_graph(text), KnowledgeGraph, subject=text)
        summary = gateway.structured(prompts.summarize(text), SummarizedContent, subject=text)
        return ChunkExtraction(graph=graph, summary=summary)
    return gateway.structured(prompts.extract_chunk(text), ChunkExtraction, subject=text)


def load_extract(uow, ctx) -> list[dict]:
    return uow.runs.stage_output(ctx.run_id, CHUNK.name)["chunks"]


def compute_extract(chunks: list[dict], ctx) -> dict:
    settings = ctx.settings
    gateway = ctx.ports.llm()
    with ThreadPoolExecutor(max_workers=settings.llm_concurrency) as pool:
        futures = [pool.submit(contextvars.copy_context().run, extract_one, gateway, settings.extraction_mode,
                               c["text"]) for c in chunks]
        results = [f.result() for f in futures]
    return {"extractions": [r.model_dump() for r in results]}


def persist_extract(uow, ctx, chunks: list[dict], output: dict) -> dict:
    # The graph's texts to embed are known now: queue them so batches run while the item waits
    # for its load (the chunk stage queued the chunks' own; the load asks for any still missing).
    run = ctx.run
    _, _, draft = document_draft(run["data_item_id"], run["dataset_id"], chunks, output["extractions"],
                         title=uow.runs.stage_output(ctx.run_id, CLASSIFY.name)["title"], intervals=False)
    _queue_vectors(uow, ctx, [t for _, t in texts_to_embed([], draft)])
    return output


# ------------------------------------------------------------------ embed_and_load


def load_embed_and_load(uow, ctx) -> dict:
    return {
        "item": _item(uow, ctx),
        "classified": uow.runs.stage_output(ctx.run_id, CLASSIFY.name),
        "chunks": uow.runs.stage_output(ctx.run_id, CHUNK.name)["chunks"],
        "extractions": uow.runs.stage_output(ctx.run_id, EXTRACT.name)["extractions"],
    }


def compute_embed_and_load(inputs: dict, ctx) -> dict:
    item = inputs["item"]
    document, chunk_rows, draft = document_draft(item["id"], item["dataset_id"], inputs["chunks"], inputs["extractions"],
                                         item["importance"], title=inputs["classified"]["title"])
    # The item's texts come from the fleet's shared batches; stored vectors are reused.
    keyed = texts_to_embed(chunk_rows, draft)
    started = time.perf_counter()
    vectors, stats = ctx.ports.vectors_for([t for _, t in keyed], item["id"], give_way=ctx.give_way)
    return {"document": document, "chunk_rows": chunk_rows, "draft": draft,
            "vectors": {k: v for (k, _), v in zip(keyed, vectors)},
            "embedding": dict(stats.as_dict(), seconds=round(time.perf_counter() - started, 3))}


def persist_embed_and_load(uow, ctx, inputs: dict, result: dict) -> dict:
    counts = uow.graph.load_document(
        dataset=inputs["item"]["dataset_id"], item=inputs["item"]["id"], document=result["document"],
        doc_type=inputs["classified"]["doc_type"], title=inputs["classified"]["title"],
        chunk_rows=result["chunk_rows"], draft=result["draft"], vectors=result["vectors"],
    )
    # What later passes (contradictions, supersession) need to find this item's graph.
    return {"counts": counts, "embedding": result["embedding"],
            "touched_entities": sorted({str(e.id) for e in result["draft"].entities}),
            "chunk_ids": [str(c["id"]) for c in result["chunk_rows"]]}


# ------------------------------------------------------------------ the declaration

ADD = Stage("add", "ingest", "cognify")  # recorded by remember with the item
CLASSIFY = Stage("classify", "ingest", "cognify", load=load_classify, compute=compute_classify)
CHUNK = Stage("chunk", "ingest", "cognify", load=load_chunk, compute=compute_chunk, persist=persist_chunk)
EXTRACT = Stage("extract_graph_and_summarize", "llm", "cognify", load=load_extract, compute=compute_extract,
                persist=persist_extract)
EMBED_AND_LOAD = Stage("embed_and_load", "embed", "cognify", load=load_embed_and_load,
                       compute=compute_embed_and_load, persist=persist_embed_and_load)

COGNIFY = Flow("cognify", (ADD, CLASSIFY, CHUNK, EXTRACT, EMBED_AND_LOAD, CONTRADICTION_CHECK, TEMPORAL_SUPERSESSION))


def run_row(run_id: uuid.UUID, dataset: uuid.UUID, item_id: uuid.UUID, *, options: dict, params: dict,
            duplicate: bool = False) -> dict:
    """A new cognify run of an item, with `add` done, for uow.runs.create_many (the batch form of uow.runs.open)."""
    return {"id": run_id, "pipeline": COGNIFY.name, "stages": COGNIFY.stages_for(options), "dataset": dataset,
            "data_item": item_id, "params": {"options": options, **params},
            "done": {ADD.name: {"data_item_id": str(item_id), "duplicate": duplicate}}}


def open_run(uow, run_id: uuid.UUID, dataset: uuid.UUID, item_id: uuid.UUID, *, options: dict, params: dict,
             duplicate: bool = False) -> list[str]:
    """Record a new cognify run of an item with `add` done; returns the stages still to run."""
    row = run_row(run_id, dataset, item_id, options=options, params=params, duplicate=duplicate)
    uow.runs.create_many([row])
    return row["stages"][1:]
