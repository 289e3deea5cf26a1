"""The embedding reuse table and the fleet's pending embedding requests (migration 0004).

Keys are (model, dimension, sha256 of the normalised text): a vector is only ever returned for
the model and dimension that made it. Requests are claimed by batches with FOR UPDATE SKIP
LOCKED inside the batch's transaction, so a batch that dies releases its claim with its
connection and the texts are claimed again by the next batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, LargeBinary, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BYTEA

from engram.adapters.store.vectors import decode, vector_array

_HASHES = bindparam("h", type_=ARRAY(BYTEA))
_M, _D = "CAST(:m AS varchar)", "CAST(:d AS int)"


def _key(alias: str = "") -> str:
    """The (model, dimension) filter every statement carries: rows of other models never match."""
    return f"{alias}model = {_M} AND {alias}dimension = {_D}"


class EmbeddingRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    def lookup(self, model: str, dimension: int, hashes: Sequence[bytes]) -> dict[bytes, list[float]]:
        """Stored vectors of these texts for exactly this model and dimension."""
        if not hashes:
            return {}
        rows = self.conn.execute(
            text(f"SELECT text_hash, vector_send(embedding) FROM embedding_vectors WHERE {_key()}"
                 f" AND vector_dims(embedding) = {_D} AND text_hash = ANY(:h)")
            .bindparams(_HASHES).columns(text_hash=LargeBinary),
            {"m": model, "d": dimension, "h": list(hashes)},
        )
        return {bytes(h): decode(v) for h, v in rows}

    def reference(self, model: str, dimension: int, hashes: Iterable[bytes], item: uuid.UUID) -> bool:
        """Record that `item` uses these texts' vectors (forget drops a vector no item uses).

        False if the item no longer exists (nothing recorded)."""
        hashes = list(hashes)
        exists = self.conn.execute(text("SELECT 1 FROM data_items WHERE id = :i FOR SHARE"), {"i": item}).first()
        if hashes and exists:
            self.conn.execute(
                text("INSERT INTO embedding_refs (model, dimension, text_hash, data_item_id)"
                     f" SELECT {_M}, {_D}, h, i.id FROM unnest(:h) AS h, data_items i WHERE i.id = :i"
                     " ON CONFLICT DO NOTHING").bindparams(_HASHES),
                {"m": model, "d": dimension, "h": hashes, "i": item},
            )
        return exists is not None

    def request(self, model: str, dimension: int, pending: dict[bytes, str]) -> int:
        """Queue texts for a batch, unless a vector or a request for them already exists.
        Returns how many of them have no stored vector (requested now or pending already)."""
        if not pending:
            return 0
        hashes = list(pending)
        return self.conn.execute(
            text(f"WITH r AS (SELECT u.h, u.t FROM unnest(:h, CAST(:t AS text[])) AS u(h, t) WHERE NOT EXISTS"
                 f"   (SELECT 1 FROM embedding_vectors v WHERE {_key('v.')} AND v.text_hash = u.h)),"
                 " queued AS (INSERT INTO embedding_requests (model, dimension, text_hash, text)"
                 f"   SELECT {_M}, {_D}, r.h, r.t FROM r ORDER BY r.h ON CONFLICT DO NOTHING)"
                 " SELECT count(*) FROM r").bindparams(_HASHES),
            {"m": model, "d": dimension, "h": hashes, "t": [pending[h] for h in hashes]},
        ).scalar_one()

    def claim(self, model: str, dimension: int, limit: int, window_seconds: float,
              timeout_seconds: float) -> list[tuple[bytes, str]]:
        """Lock up to `limit` pending texts for this transaction, oldest requests first (so the
        items that asked first are the first whose vectors are all stored, and their loads run
        while later texts embed). The embedder cuts a claim into like-length forwards itself:
        claims of a few hundred texts pad as little as one length-sorted call over all of them
        (bench, one torch thread: request-ordered claims of 256 at 1.01x the time of one call,
        claims of 64 at 1.19x).

        Returns nothing (locks nothing worth keeping) while fewer than `limit` wait and the
        oldest waited less than `window_seconds`: the window lets other items' texts join.
        """
        # A host that vanishes mid-batch holds its locks until Postgres drops the idle session.
        self.conn.execute(text(f"SET LOCAL idle_in_transaction_session_timeout = {int(timeout_seconds * 1000)}"))
        rows = self.conn.execute(
            text("SELECT r.text_hash, r.text, r.requested_at <= clock_timestamp() - make_interval(secs => :w),"
                 f" EXISTS (SELECT 1 FROM embedding_vectors v WHERE {_key('v.')} AND v.text_hash = r.text_hash)"
                 f" FROM embedding_requests r WHERE {_key('r.')}"
                 " ORDER BY r.requested_at, length(r.text) LIMIT :n FOR UPDATE OF r SKIP LOCKED"),
            {"m": model, "d": dimension, "n": limit, "w": window_seconds},
        ).all()
        # A request whose statement snapshot predates the commit of the batch that stored its
        # vector (and deleted that batch's request row) lands after it: drop it, embed nothing.
        done = [bytes(h) for h, _, _, stored in rows if stored]
        if done:
            self.conn.execute(text(f"DELETE FROM embedding_requests WHERE {_key()} AND text_hash = ANY(:h)")
                              .bindparams(_HASHES), {"m": model, "d": dimension, "h": done})
        pending = [(bytes(h), t, ripe) for h, t, ripe, stored in rows if not stored]
        if not pending or (len(pending) < limit and not any(ripe for _, _, ripe in pending)):
            return []
        return [(h, t) for h, t, _ in pending]

    def store(self, model: str, dimension: int, vectors: dict[bytes, list[float]]) -> int:
        """Keep claimed texts' vectors (only those some item still references) and drop the requests."""
        if not vectors:
            return 0
        hashes = list(vectors)
        stored = self.conn.execute(
            text("INSERT INTO embedding_vectors (model, dimension, text_hash, embedding)"
                 f" SELECT {_M}, {_D}, r.h, r.v FROM unnest(:h, CAST(:v AS vector[])) AS r(h, v)"
                 f" WHERE EXISTS (SELECT 1 FROM embedding_refs f WHERE {_key('f.')} AND f.text_hash = r.h)"
                 " ON CONFLICT DO NOTHING").bindparams(_HASHES),
            {"m": model, "d": dimension, "h": hashes, "v": vector_array(self.conn, [vectors[h] for h in hashes])},
        ).rowcount
        self.conn.execute(
            text(f"DELETE FROM embedding_requests WHERE {_key()} AND text_hash = ANY(:h)")
            .bindparams(_HASHES),
            {"m": model, "d": dimension, "h": hashes},
        )
        return stored

    def pending(self, model: str, dimension: int) -> int:
        """Texts of this model waiting for a vector (held by a batch or not)."""
        return self.conn.execute(text(f"SELECT count(*) FROM embedding_requests WHERE {_key()}"),
                                 {"m": model, "d": dimension}).scalar_one()

    def ripens_in(self, model: str, dimension: int, window_seconds: float) -> float | None:
        """Seconds until the oldest request no batch holds has waited `window_seconds` (0 or
        less: it has); None when no batch-free request of this model waits."""
        row = self.conn.execute(
            text("SELECT extract(epoch FROM requested_at + make_interval(secs => :w) - clock_timestamp())"
                 f" FROM embedding_requests WHERE {_key()} ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED"),
            {"m": model, "d": dimension, "w": window_seconds}).first()
        return None if row is None else float(row[0])

    def counts(self) -> dict[str, int]:
        row = self.conn.execute(text(
            "SELECT (SELECT count(*) FROM embedding_vectors), (SELECT count(*) FROM embedding_requests),"
            " (SELECT count(*) FROM embedding_refs)")).one()
        return {"vectors": row[0], "requests": row[1], "refs": row[2]}


def forget_embeddings(conn: Connection, items: Sequence[uuid.UUID]) -> int:
    """Drop the reuse rows only these items referenced; call before the items are deleted.

    A content-addressed vector is shared by every item whose text normalises to the same
    string: it goes when the last item using it is forgotten.
    """
    if not items:
        return 0
    keys = conn.execute(
        text("DELETE FROM embedding_refs WHERE data_item_id = ANY(CAST(:i AS uuid[]))"
             " RETURNING model, dimension, text_hash"), {"i": list(items)},
    ).all()
    if not keys:
        return 0
    params = {"m": [k[0] for k in keys], "d": [k[1] for k in keys], "h": [bytes(k[2]) for k in keys]}
    orphans = ("SELECT k.m, k.d, k.h FROM unnest(CAST(:m AS varchar[]), CAST(:d AS int[]), :h) AS k(m, d, h)"
               " WHERE NOT EXISTS (SELECT 1 FROM embedding_refs f WHERE f.model = k.m AND f.dimension = k.d"
               "   AND f.text_hash = k.h)")
    conn.execute(text(f"DELETE FROM embedding_requests WHERE (model, dimension, text_hash) IN ({orphans})")
                 .bindparams(_HASHES), params)
    return conn.execute(text(f"DELETE FROM embedding_vectors WHERE (model, dimension, text_hash) IN ({orphans})")
                        .bindparams(_HASHES), params).rowcount
