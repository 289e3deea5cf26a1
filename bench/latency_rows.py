"""The rows of bench/recall_latency.py's deployments: chunks of real-shaped text, assembled from
the bench corpora, with what the product's load writes for the fields recall reads, bulk-loaded
by binary COPY. Bench-only code: nothing in the product imports it.

- The pool: the prose of the hotpot, natural, kb and multihop sets split into sentences, and the
  conversations' turns as `Speaker: text` lines (bench/corpus/*.py).
- Prose chunks: 3-6 sentences, each following the one before in its passage three times in
  four, else a random sentence of the pool (topical runs, few exact repeats), at most the
  embedder's window in its own tokens; documents of 1-8 chunks.
- Conversation chunks (CONVERSATION_SHARE of them): 4-10 whole turns (runs of 2-5 consecutive
  turns from two sessions of one conversation) cut by the product's chunker
  (pipelines/cognify/conversation.chunk_conversation) under the first session's date, so they
  carry the conversation columns (occurred_at, speakers, resolved dates, turns) and have turn
  windows; session documents of 1-4 chunks.
- Each row as adapters/store/graph.py load_document writes it: text, token_count, lex_length and
  BM25 postings in chunk_terms (pipelines/recall/lexical.postings), years
  (pipelines/dates.years_named), the embedding, the conversation columns, and the 2- and 3-turn
  windows in chunk_windows (pipelines/cognify/windows.windows_of); tests/integration/
  test_recall_latency_bench.py checks the COPY rows against load_document's. No entities, edges
  or summaries.
- Vectors: every distinct sentence and turn line is embedded once by the configured embedder
  (cached in the state directory). A chunk's (a window's) vector is the normalised mean of its
  lines' vectors plus Gaussian noise of norm NOISE (per coordinate N(0, NOISE^2/d)), normalised
  again: real neighbourhoods, no two rows alike, without embedding 100,000 texts.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import numpy as np

from engram.models.vector_index import check_build_memory

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
NOISE = 0.1  # norm of the Gaussian noise added to a chunk's (window's) mean vector
CONVERSATION_SHARE = 0.1
PROSE_CORPORA = ("hotpot", "natural", "kb", "multihop")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


# ------------------------------------------------------------------ the text pool


@dataclass
class Pool:
    passages: list[tuple[str, list[str]]]  # (title, sentences) of the prose corpora
    sessions: list[dict]  # {conversation, started_at, turns: [(id, speaker, text)]}
    by_conversation: dict[str, list[int]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """Every text a chunk is assembled from: sentences and turn lines (`Speaker: text`)."""
        out = [s for _, sentences in self.passages for s in sentences]
        out += [f"{speaker}: {text}" for s in self.sessions for _, speaker, text in s["turns"]]
        return list(dict.fromkeys(out))


def sentences(text: str) -> list[str]:
    out = []
    for paragraph in re.split(r"\n\s*", text):
        for piece in _SENTENCE.split(" ".join(paragraph.split())):
            if len(piece.split()) >= 3:
                out.append(piece.strip())
    return out


def text_pool() -> Pool:
    from importlib import import_module

    import conversations

    passages = []
    for corpus in PROSE_CORPORA:
        documents, _ = import_module(corpus).generate()
        passages += [(doc[0], found) for doc in documents if (found := sentences(doc[1]))]
    sessions = []
    for conv in conversations.conversations():
        for session in conv["sessions"]:
            turns = [(t["id"], t["speaker"], " ".join(t["text"].split())) for t in session["turns"]]
            sessions.append({"conversation": conv["id"], "started_at": session["started_at"], "turns": turns})
    pool = Pool(passages, sessions)
    for n, s in enumerate(sessions):
        pool.by_conversation.setdefault(s["conversation"], []).append(n)
    return pool


class Vectors:
    """The pool's line vectors, embedded once per model and cached in the state directory."""

    def __init__(self, embedder, cache: Path | None):
        self.embedder, self.cache = embedder, cache
        self.index: dict[str, int] = {}
        self.matrix = np.zeros((0, embedder.dimension), dtype=np.float32)
        if cache is not None and cache.with_suffix(".json").exists() and cache.with_suffix(".npy").exists():
            texts = json.loads(cache.with_suffix(".json").read_text(encoding="utf-8"))
            matrix = np.load(cache.with_suffix(".npy"))
            if len(texts) == len(matrix) and matrix.shape[1] == embedder.dimension:
                self.index, self.matrix = {t: i for i, t in enumerate(texts)}, matrix

    def ensure(self, texts: list[str]) -> float:
        """Embed the texts not cached yet; returns the seconds it took."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.index]
        if not missing:
            return 0.0
        started = time.perf_counter()
        found = np.asarray(self.embedder.embed(missing), dtype=np.float32)
        seconds = time.perf_counter() - started
        self.index.update({t: len(self.index) + i for i, t in enumerate(missing)})
        self.matrix = np.vstack([self.matrix, found])
        if self.cache is not None:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            np.save(self.cache.with_suffix(".npy"), self.matrix)
            self.cache.with_suffix(".json").write_text(json.dumps(list(self.index)), encoding="utf-8")
        return seconds

    def mean(self, texts: list[str], rng: np.random.Generator) -> np.ndarray:
        """The normalised mean of the texts' vectors plus noise of norm ~NOISE, normalised."""
        v = self.matrix[[self.index[t] for t in texts]].mean(axis=0)
        v = v / np.linalg.norm(v)
        v = v + rng.standard_normal(v.shape[0]).astype(np.float32) * (NOISE / np.sqrt(v.shape[0]))
        return (v / np.linalg.norm(v)).astype(np.float32)


# ------------------------------------------------------------------ assembling the rows


@dataclass
class Document:
    title: str
    doc_type: str
    chunks: list[dict]  # chunk rows as the chunk stage persists them, plus "lines" (texts of the pool)


class Assembler:
    """Documents of chunks assembled from the pool, deterministic for a seed."""

    def __init__(self, pool: Pool, limit: int, count_tokens, seed: int):
        self.pool, self.limit = pool, limit
        self._line_tokens = lru_cache(maxsize=None)(count_tokens)
        self.rng = random.Random(seed)

    def count(self, text: str) -> int:
        """The embedder's tokens of a text of pool lines: the sum of its lines' (a WordPiece
        tokenizer splits at whitespace first, so joining lines adds and merges no token)."""
        return sum(self._line_tokens(line) for line in text.split("\n"))

    def documents(self, chunks: int):
        conversational = round(chunks * CONVERSATION_SHARE) if self.pool.sessions else 0
        made = 0
        while made < conversational:
            doc = self.session_document(min(self.rng.randint(1, 4), conversational - made))
            made += len(doc.chunks)
            yield doc
        while made < chunks:
            doc = self.prose_document(min(self.rng.randint(1, 8), chunks - made))
            made += len(doc.chunks)
            yield doc

    def _fits(self, lines: list[str]) -> bool:
        return sum(self._line_tokens(line) for line in lines) <= self.limit

    def prose_document(self, size: int) -> Document:
        passages, rng = self.pool.passages, self.rng
        p = rng.randrange(len(passages))
        s = rng.randrange(len(passages[p][1]))
        rows = []
        for index in range(size):
            lines: list[str] = []
            for _ in range(rng.randint(3, 6)):
                if lines:  # the next sentence of the passage three times in four, else anywhere
                    if rng.random() < 0.75 and s + 1 < len(passages[p][1]):
                        s += 1
                    else:
                        p = rng.randrange(len(passages))
                        s = rng.randrange(len(passages[p][1]))
                sentence = passages[p][1][s]
                if sentence in lines or (lines and not self._fits([*lines, sentence])):
                    continue
                lines.append(sentence)
            text = " ".join(lines)
            rows.append({"index": index, "text": text, "token_count": self.count("\n".join(lines)),
                         "cut_type": "sentence_end", "lines": lines})
        rows[-1]["cut_type"] = "end"
        return Document(passages[p][0], "text", rows)

    def session_document(self, size: int) -> Document:
        from engram.pipelines.cognify.conversation import Conversation, Turn, chunk_conversation, conversation_chunk_row
        from engram.pipelines.dates import utc

        pool, rng = self.pool, self.rng
        home = pool.sessions[rng.randrange(len(pool.sessions))]
        started = utc(datetime.fromisoformat(home["started_at"]))  # as a transcript's header is read
        siblings = pool.by_conversation[home["conversation"]]
        rows = []
        for index in range(size):
            turns: list[tuple[str, str, str]] = []
            for session in (home, pool.sessions[rng.choice(siblings)]):
                start = rng.randrange(len(session["turns"]))
                for turn in session["turns"][start:start + rng.randint(2, 5)]:
                    if turn in turns or (turns and not self._fits([f"{t[1]}: {t[2]}" for t in (*turns, turn)])):
                        continue
                    turns.append(turn)
            conversation = Conversation([Turn(speaker, text, None, tid) for tid, speaker, text in turns], started)
            [chunk] = chunk_conversation(conversation, max(self.limit, 1_000_000), self.count)  # fits: checked above
            row = conversation_chunk_row(chunk)
            row.update(index=index, token_count=self.count(row["text"]), lines=row["text"].split("\n"))
            rows.append(row)
        names = ", ".join(dict.fromkeys(s for r in rows for s in r["speakers"]))
        return Document(f"Conversation of {started:%d %B %Y}: {names}", "conversation", rows)


# ------------------------------------------------------------------ the loader (bench only)


CHUNK_COLUMNS = ("id", "document_id", "dataset_id", "chunk_index", "text", "token_count", "cut_type", "embedding",
                 "lex_length", "years", "occurred_at", "speakers", "dates", "conversation")
CHUNK_TYPES = ("uuid", "uuid", "uuid", "int4", "text", "int4", "varchar", "vector", "int4", "int4[]", "timestamptz",
               "text[]", "jsonb", "jsonb")


class Loader:
    """Binary COPY of documents, chunks, BM25 postings and turn windows: the rows load_document
    writes for the fields recall reads, without its per-row statements. One transaction per batch."""

    def __init__(self, engine):
        self.engine = engine

    def counts(self, dataset: uuid.UUID) -> dict[str, int]:
        from sqlalchemy import text

        with self.engine.connect() as conn:
            return {t: conn.execute(text(f"SELECT count(*) FROM {t} WHERE dataset_id = :d"), {"d": dataset}).scalar_one()
                    for t in ("chunks", "chunk_terms", "chunk_windows", "documents")}

    def clear(self, dataset: uuid.UUID) -> None:
        """Drop the dataset's content (items cascade to documents, chunks, postings and windows)."""
        from sqlalchemy import text

        with self.engine.begin() as conn:
            conn.execute(text("DELETE FROM data_items WHERE dataset_id = :d"), {"d": dataset})

    @staticmethod
    def assign_ids(dataset: uuid.UUID, documents: list[Document], first: int) -> list[tuple]:
        """(document, item id, document id, content hash, content) of documents numbered from
        `first`, ids as the product derives them (pipelines/ids); sets each chunk row's "id"."""
        from engram.pipelines import ids

        items = []
        for number, doc in enumerate(documents, first):
            content = "\n\n".join(c["text"] for c in doc.chunks)
            digest = ids.content_hash(f"bench-latency-{number}\n{content}".encode())
            item = ids.data_item_id(dataset, digest)
            document = ids.document_id(item)
            for c in doc.chunks:
                c["id"] = ids.chunk_id(document, c["index"])
            items.append((doc, item, document, digest, content))
        return items

    def load(self, dataset: uuid.UUID, documents: list[Document], vectors: Vectors, first: int,
             seed: int) -> dict[str, int]:
        """COPY documents numbered from `first` (their items' ids derive from the number) in one
        transaction; returns the rows written per table."""
        from pgvector.psycopg import register_vector

        from engram.pipelines.cognify.windows import windows_of
        from engram.pipelines.dates import years_named
        from engram.pipelines.recall.lexical import postings

        rng = np.random.default_rng(seed)
        items = self.assign_ids(dataset, documents, first)
        written = {"documents": len(items), "chunks": 0, "chunk_terms": 0, "chunk_windows": 0}
        raw = self.engine.raw_connection()
        try:
            conn = raw.driver_connection
            register_vector(conn)
            with conn.cursor() as cur:
                with cur.copy("COPY data_items (id, dataset_id, content_hash, name, content)"
                              " FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["uuid", "uuid", "varchar", "text", "text"])
                    for doc, item, _, digest, content in items:
                        copy.write_row([item, dataset, digest, doc.title, content])
                with cur.copy("COPY documents (id, data_item_id, dataset_id, doc_type, title)"
                              " FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["uuid", "uuid", "uuid", "varchar", "text"])
                    for doc, item, document, _, _ in items:
                        copy.write_row([document, item, dataset, doc.doc_type, doc.title])
                terms: list[tuple] = []
                with cur.copy(f"COPY chunks ({', '.join(CHUNK_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(list(CHUNK_TYPES))
                    for doc, _, document, _, _ in items:
                        for c in doc.chunks:
                            counts, length = postings(c["text"])  # as load_document: lexical.postings
                            terms += [(c["id"], term, tf, length) for term, tf in counts.items()]
                            talk = bool(c.get("conversation"))  # as graph._conversation_columns
                            copy.write_row([
                                c["id"], document, dataset, c["index"], c["text"], c["token_count"], c["cut_type"],
                                vectors.mean(c["lines"], rng), length, years_named(c["text"]),
                                datetime.fromisoformat(c["occurred_at"]) if talk and c.get("occurred_at") else None,
                                list(c.get("speakers") or []) if talk else None,
                                list(c.get("dates") or []) if talk else None,
                                c["conversation"] if talk else None])
                            written["chunks"] += 1
                with cur.copy("COPY chunk_terms (dataset_id, term, chunk_id, tf, dl)"
                              " FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["uuid", "text", "uuid", "int4", "int4"])
                    for chunk, term, tf, length in terms:
                        copy.write_row([dataset, term, chunk, tf, length])
                written["chunk_terms"] = len(terms)
                with cur.copy("COPY chunk_windows (id, chunk_id, dataset_id, document_id, width, start, embedding)"
                              " FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["uuid", "uuid", "uuid", "uuid", "int2", "int2", "vector"])
                    for doc, _, document, _, _ in items:
                        for w in windows_of(doc.chunks):  # none but a conversation chunk's
                            copy.write_row([w.id, w.chunk_id, dataset, document, w.width, w.start,
                                            vectors.mean(w.text.split("\n"), rng)])
                            written["chunk_windows"] += 1
            conn.commit()
        finally:
            raw.close()
        return written

    def vector_indexes(self) -> dict[str, str]:
        """The HNSW indexes of chunks and chunk_windows: name -> definition (pg_indexes)."""
        from sqlalchemy import text

        with self.engine.connect() as conn:
            return dict(conn.execute(text(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
                " AND tablename IN ('chunks', 'chunk_windows') AND indexdef ILIKE '%USING hnsw%'")).all())

    @contextlib.contextmanager
    def vector_indexes_built_after(self, saved: Path, memory: str = "1GB"):
        """Drop the HNSW indexes, and build them again, as they were, once the block is done
        (with maintenance_work_mem = `memory`: the graph is built in memory, and slowly once it
        outgrows it). Their definitions wait in `saved` meanwhile: a run stopped half-way restores them first."""
        from sqlalchemy import text

        self.restore_vector_indexes(saved, memory)
        found = self.vector_indexes()
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(found))
        with self.engine.begin() as conn:
            for name in found:
                conn.execute(text(f'DROP INDEX IF EXISTS "{name}"'))
        try:
            yield
        finally:
            self.restore_vector_indexes(saved, memory)

    def restore_vector_indexes(self, saved: Path, memory: str = "1GB") -> None:
        from sqlalchemy import text

        if not saved.exists():
            return
        wanted, present = json.loads(saved.read_text()), self.vector_indexes()
        with self.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            check_build_memory(memory)
            conn.execute(text(f"SET maintenance_work_mem = '{memory}'"))  # the graph is built in memory
            for name, definition in wanted.items():
                if name not in present:
                    conn.execute(text(definition))
        saved.unlink()

    def analyze(self) -> None:
        from sqlalchemy import text

        with self.engine.connect() as conn:
            # What autovacuum does to a table after a bulk insert: statistics, and the visibility
            # map that lets BM25 read postings by index-only scans.
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM (ANALYZE) chunks, chunk_terms, chunk_windows, documents, data_items"))

    def sizes(self) -> dict[str, int]:
        """pg_total_relation_size (heap, indexes, TOAST) of the tables recall's lanes read."""
        from sqlalchemy import text

        with self.engine.connect() as conn:
            return {t: conn.execute(text("SELECT pg_total_relation_size(CAST(:t AS regclass))"), {"t": t}).scalar_one()
                    for t in ("chunks", "chunk_terms", "chunk_windows")}
