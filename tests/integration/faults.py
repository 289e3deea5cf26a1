"""Helpers of the fault suite: a document corpus, the graph a clean run must produce, figures."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import text
from sqlalchemy.exc import OperationalError

CITIES = ["Port Alder", "Tessel", "Marrow Bay", "Greyhaven", "Olmstead", "Cinder Falls", "Wrenfield"]
COMPANIES = [f"{w} {k}" for w in ("Harbor", "Lantern", "Quarry", "Beacon", "Copper") for k in ("Dynamics", "Works", "Labs", "Mills")]


def corpus(n: int, tag: str) -> list[str]:
    """n short, distinct documents whose entities overlap (concurrent loads upsert the same rows)."""
    docs = []
    for i in range(n):
        company, city = COMPANIES[i % len(COMPANIES)], CITIES[i % len(CITIES)]
        docs.append(f"Report {tag} number {i}. Person{i} Halvorsen works at {company}. "
                    f"{company} is located in {city}. Person{i} Halvorsen founded Project{i} Ardent in {1950 + i}.")
    return docs


def expected_graph(dataset: uuid.UUID, docs: list[str], llm_model: str | None = None) -> dict[str, set[uuid.UUID]]:
    """The ids a clean run writes, computed by the pure pipeline in this process (offline LLM, or
    the workers' `llm_model`, e.g. their replay cassette)."""
    from engram.adapters.llm.gateway import gateway_from_settings
    from engram.models.payloads import RememberItem
    from engram.pipelines import ids
    from engram.adapters.embed import get_embedder
    from engram.pipelines.cognify.chunk import chunk_for_embedder
    from engram.pipelines.cognify.extract import build_graph
    from engram.pipelines.cognify.ingest import prepare
    from engram.settings import get_settings
    from engram.pipelines.cognify.flow import extract_one

    settings = get_settings()
    embedder = get_embedder(settings)
    gateway = gateway_from_settings(settings.model_copy(update={"llm_model": llm_model}) if llm_model else settings)
    out: dict[str, set[uuid.UUID]] = {"data_items": set(), "chunks": set(), "entities": set(), "edges": set(),
                                      "summaries": set()}
    for i, doc in enumerate(docs):
        item = prepare(RememberItem(text=doc), settings.max_content_bytes, i)
        item_id = ids.data_item_id(dataset, item.digest)
        document = ids.document_id(item_id)
        drafts = chunk_for_embedder(item.text, settings.max_chunk_tokens, embedder)
        chunks = [(ids.chunk_id(document, c.index), c.text) for c in drafts]
        draft = build_graph(dataset, chunks, [extract_one(gateway, "single", t) for _, t in chunks])
        out["data_items"].add(item_id)
        out["chunks"].update(c for c, _ in chunks)
        out["entities"].update(e.id for e in draft.entities)
        out["edges"].update(e.id for e in draft.edges)
        out["summaries"].update(s.id for s in draft.summaries)
    return out


def _item_id(dataset: uuid.UUID, doc: str) -> uuid.UUID:
    from engram.pipelines import ids

    return ids.data_item_id(dataset, ids.content_hash(doc.encode()))


def actual_graph(store, dataset: uuid.UUID) -> dict[str, list[uuid.UUID]]:
    with store.unit_of_work() as uow:
        return {t: list(uow.conn.execute(text(f"SELECT id FROM {t} WHERE dataset_id = :d"), {"d": dataset}).scalars())
                for t in ("data_items", "chunks", "entities", "edges", "summaries")}


def run_states(store, dataset: uuid.UUID) -> list[dict]:
    with store.unit_of_work() as uow:
        return [dict(r) for r in uow.conn.execute(text(
            "SELECT id, data_item_id, status, error FROM pipeline_runs WHERE dataset_id = :d"), {"d": dataset}).mappings()]


def wait_terminal(store, dataset: uuid.UUID, expected_runs: int, timeout: float, tick=None,
                  every: float = 10.0) -> list[dict]:
    """Runs once all are completed/failed (or the timeout passed); `tick` runs every `every` s (beat's sweep)."""
    deadline = time.monotonic() + timeout
    next_tick = time.monotonic() + every
    while True:
        if tick is not None and time.monotonic() >= next_tick:
            tick()
            next_tick = time.monotonic() + every
        try:
            runs = run_states(store, dataset)
        except OperationalError:  # the database restarting under the test: ask again
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)
            continue
        if len(runs) >= expected_runs and all(r["status"] in ("completed", "failed") for r in runs):
            return runs
        if time.monotonic() > deadline:
            return runs
        time.sleep(1.0)


def figures(name: str, store, dataset: uuid.UUID, docs: list[str], runs: list[dict], llm_model: str | None = None,
            **extra) -> dict:
    """lost / duplicated / stuck against the clean graph; printed for the closing note."""
    failed_items = {r["data_item_id"] for r in runs if r["status"] == "failed"}
    # A failed run wrote no graph: compare only the documents that completed.
    expected = expected_graph(dataset, [d for d in docs if _item_id(dataset, d) not in failed_items], llm_model)
    expected["data_items"] = {_item_id(dataset, d) for d in docs}
    actual = actual_graph(store, dataset)
    completed_items = {r["data_item_id"] for r in runs if r["status"] == "completed"}
    # Lost: an accepted document with no item or no run left to account for it.
    lost = len(expected["data_items"] - (set(actual["data_items"]) & {r["data_item_id"] for r in runs}))
    duplicated = sum(len(v) - len(set(v)) for v in actual.values()) + (len(runs) - len({r["data_item_id"] for r in runs}))
    extra_rows = {t: len(set(actual[t]) - expected[t]) for t in expected}
    missing_rows = {t: len(expected[t] - set(actual[t])) for t in expected}
    stuck = sum(1 for r in runs if r["status"] not in ("completed", "failed"))
    failed_without_error = sum(1 for r in runs if r["status"] == "failed" and not r["error"])
    out = {"scenario": name, "documents": len(docs), **extra, "completed": len(completed_items), "lost": lost,
           "duplicated": duplicated + sum(extra_rows.values()), "stuck": stuck,
           "failed_without_error": failed_without_error,
           "errors": sorted({(r["error"] or "")[:160] for r in runs if r["status"] == "failed"})[:3], "missing_rows": missing_rows, "extra_rows": extra_rows}
    print(f"\nFAULT FIGURES {out}")
    return out
