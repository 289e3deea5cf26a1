"""The floor of bench/ingest.py: in one process, the same model on every core, each unique text
embedded once (timed both as N forks on one torch thread each and as one process on N threads,
the faster counting), then the same rows written through the same load, no Celery."""

from __future__ import annotations

import os
import time

def prepare_floor(docs, dataset_id, settings):
    """What a floor writes: the items' rows and the (row id, text) pairs to embed, LLM answers precomputed."""
    from engram.adapters.llm.offline import offline_chunk_extraction
    from engram.pipelines import ids
    from engram.adapters.embed import get_embedder
    from engram.pipelines.cognify.chunk import chunk_for_embedder
    from engram.pipelines.cognify.embedding import texts_to_embed
    from engram.pipelines.cognify.extract import build_graph

    out = []
    embedder = get_embedder(settings)
    for name, text in docs:
        chunks = chunk_for_embedder(text, settings.max_chunk_tokens, embedder)
        extractions = [offline_chunk_extraction(c.text) for c in chunks]
        digest = ids.content_hash(text.encode())
        document = ids.document_id(ids.data_item_id(dataset_id, digest))
        rows = [{"id": ids.chunk_id(document, c.index), "index": c.index, "text": c.text,
                 "token_count": c.token_count, "cut_type": c.cut_type} for c in chunks]
        title = name or text.strip().splitlines()[0][:200]  # as the classify stage names it
        draft = build_graph(dataset_id, [(r["id"], r["text"]) for r in rows], extractions, title=title)
        out.append((name, text, digest, document, rows, draft, texts_to_embed(rows, draft)))
    return out


def unique_texts(prepared, seen) -> dict[bytes, str]:
    from engram.pipelines.cognify.embedding import normalise, text_key

    out: dict[bytes, str] = {}
    for *_, keyed in prepared:
        for _, t in keyed:
            n = normalise(t)
            k = text_key(n)
            if k not in seen:
                out.setdefault(k, n)
    return out


def run_floor(docs, dataset: str, settings, embedder, seen: dict[bytes, list[float]]) -> dict:
    """Embed each text not embedded before once, then write the same rows, in this process.

    `seen` holds the vectors earlier sets embedded: a text they had is not embedded again, but
    its rows are written with its vector, as the pipeline writes them (a row without one would
    skip its vector index's insert, which the pipeline pays)."""
    from engram.adapters.store import Store
    from engram.pipelines.cognify.embedding import normalise, text_key

    store = Store()
    with store.unit_of_work() as uow:
        dataset_id = uow.access.create_dataset("bench", dataset)
    prepared = prepare_floor(docs, dataset_id, settings)
    todo = unique_texts(prepared, seen)
    texts = list(todo.values())
    # Two ways to spend the cores on the same texts; the floor is the faster (on a busy host one
    # process on two torch threads waits on the other core at every OpenMP region).
    forked_s, _ = _timed(lambda: embed_forked(embedder, texts, _cores()))
    threaded_s, embedded_vectors = _timed(lambda: embed_threaded(embedder, texts, _cores()))
    embed_s = min(forked_s, threaded_s)
    seen.update(zip(todo, embedded_vectors))
    written = time.perf_counter()
    with store.unit_of_work() as uow:
        for name, text, digest, document, rows, draft, keyed in prepared:
            item, _ = uow.graph.add_item(dataset_id, digest, text, name=name, mime=None, source=None)
            by_row = {k: seen[text_key(normalise(t))] for k, t in keyed}
            uow.graph.load_document(dataset=dataset_id, item=item, document=document, doc_type="text",
                                    title=None, chunk_rows=rows, draft=draft, vectors=by_row)
    write_s = time.perf_counter() - written
    wall = embed_s + write_s
    return {"wall_s": round(wall, 3), "docs_per_s": round(len(docs) / wall, 3), "embed_s": round(embed_s, 3),
            "embed_forked_s": round(forked_s, 3), "embed_threaded_s": round(threaded_s, 3),
            "write_s": round(write_s, 3), "texts_embedded": len(todo)}


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def _timed(fn):
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def embed_threaded(embedder, texts: list[str], cores: int) -> list:
    from engram.adapters.embed import set_torch_threads

    set_torch_threads(cores)
    return embedder.embed(texts)


def embed_forked(embedder, texts: list[str], processes: int) -> list:
    """`processes` forks of this process, one torch thread each, every other length-sorted text."""
    import pickle

    from engram.adapters.embed import set_torch_threads

    set_torch_threads(1)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    shares = [order[k::processes] for k in range(processes)]
    children = []
    for share in shares:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            with os.fdopen(write, "wb") as f:
                f.write(pickle.dumps(embedder.embed([texts[i] for i in share])))
            os._exit(0)
        os.close(write)
        children.append((pid, read, share))
    out: list = [None] * len(texts)
    for pid, read, share in children:
        with os.fdopen(read, "rb") as f:
            for i, vector in zip(share, pickle.loads(f.read())):
                out[i] = vector
        os.waitpid(pid, 0)
    return out


class FloorProcess:
    """The floor in this process: a fresh torch and every core, the faster of N forks on one
    torch thread each and one process on N threads; texts an earlier set embedded are not
    embedded again. Building it loads the model (timed as load_s: the cold floor adds it)."""

    def __init__(self, settings):
        started = time.perf_counter()
        from engram.adapters.embed import get_embedder

        self.settings = settings
        self.embedder = get_embedder(settings)
        self.embedder.preload()  # one thread: the forked floor's children start no OpenMP pool of ours
        self.load_s = time.perf_counter() - started
        self.seen: dict[bytes, list[float]] = {}  # text key -> the vector a set embedded

    def run(self, docs, dataset: str) -> dict:
        return run_floor(docs, dataset, self.settings, self.embedder, self.seen)


def speed_probe(embedder, repeats: int = 20) -> dict:
    """How fast this machine is right now, on one torch thread: a short text's forward and a
    256-token chunk's (ms). This host's speed drifts up to 3x over hours (10 ms vs 30 ms for the
    short one), so figures from different runs compare only alongside their probes."""
    from engram.adapters.embed import set_torch_threads

    set_torch_threads(1)
    short = "Alice works at Lomonosov Moscow State University"
    chunk = " ".join(["The quick brown fox jumps over the lazy dog near the old river bank."] * 20)
    embedder.embed([short])
    out = {}
    for label, text, n in (("short_forward_ms", short, repeats), ("chunk_forward_ms", chunk, max(1, repeats // 4))):
        started = time.perf_counter()
        for _ in range(n):
            embedder.embed([text])
        out[label] = round((time.perf_counter() - started) / n * 1000, 1)
    return out
