"""Bulk loading of synthetic chunks for benchmarks: binary COPY, batched commits.

Not a production path: rows go in without summaries, entities or edges, and embeddings come
from the caller (e.g. random vectors), never from the embedder.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
from sqlalchemy import Engine, text

from engram.pipelines import ids

COLUMNS = "id, document_id, dataset_id, chunk_index, text, token_count, cut_type, embedding"


class BulkLoader:
    def __init__(self, engine: Engine):
        self.engine = engine

    def dataset_chunks(self, dataset: uuid.UUID) -> int:
        with self.engine.connect() as conn:
            return conn.execute(text("SELECT count(*) FROM chunks WHERE dataset_id = :d"), {"d": dataset}).scalar_one()

    def clear(self, dataset: uuid.UUID) -> None:
        """Drop the dataset's content (items cascade to documents and chunks); keep the dataset."""
        with self.engine.begin() as conn:
            conn.execute(text("DELETE FROM edges WHERE dataset_id = :d"), {"d": dataset})
            conn.execute(text("DELETE FROM data_items WHERE dataset_id = :d"), {"d": dataset})

    def load(self, dataset: uuid.UUID, batches: Iterator[np.ndarray], per_document: int = 1000,
             label: str = "synthetic") -> int:
        """COPY one chunk per vector row, `per_document` chunks per document; commits per batch."""
        from pgvector.psycopg import register_vector

        loaded = 0
        raw = self.engine.raw_connection()
        try:
            conn = raw.driver_connection
            register_vector(conn)
            for vectors in batches:
                documents = self._documents(conn, dataset, loaded, len(vectors), per_document, label)
                with conn.cursor() as cur, cur.copy(f"COPY chunks ({COLUMNS}) FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["uuid", "uuid", "uuid", "int4", "text", "int4", "varchar", "vector"])
                    for offset, vector in enumerate(vectors):
                        n = loaded + offset
                        document = documents[n // per_document]
                        copy.write_row([ids.chunk_id(document, n % per_document), document, dataset,
                                        n % per_document, f"{label} chunk {n}", 3, "synthetic", vector])
                conn.commit()
                loaded += len(vectors)
        finally:
            raw.close()
        return loaded

    def analyze(self) -> None:
        """Refresh planner statistics: stale ones after a bulk load make the planner mis-pick
        a dataset-index scan over the HNSW index (or the reverse)."""
        with self.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE chunks, documents, data_items"))

    @staticmethod
    def _documents(conn, dataset: uuid.UUID, first: int, count: int, per_document: int, label: str) -> dict:
        """Data items and documents for chunk numbers [first, first + count)."""
        out = {}
        with conn.cursor() as cur:
            for d in range(first // per_document, (first + count - 1) // per_document + 1):
                digest = ids.content_hash(f"{label}-{d}".encode())
                item = ids.data_item_id(dataset, digest)
                document = ids.document_id(item)
                cur.execute("INSERT INTO data_items (id, dataset_id, content_hash, name, content)"
                            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            (item, dataset, digest, f"{label}-{d}", f"{label} document {d}"))
                cur.execute("INSERT INTO documents (id, data_item_id, dataset_id, doc_type, title)"
                            " VALUES (%s, %s, %s, 'text', %s) ON CONFLICT DO NOTHING",
                            (document, item, dataset, f"{label}-{d}"))
                out[d] = document
        return out
