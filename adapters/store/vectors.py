"""pgvector values in its binary wire format, for the statements that move many vectors.

pgvector's text form costs ~0.2-0.4 ms of Python per 384-d vector each way (formatting or
parsing 384 floats), as much as the rest of an embedding-reuse statement; the binary form
(`vector_send`'s output: int16 dimension, int16 zero, big-endian float32s) is one numpy call.

Reads: select `vector_send(col)` and decode it with `decode`. Writes: bind `vector_array(conn,
vectors)` as `CAST(:v AS vector[])`; it is sent as a binary parameter of unspecified type, which
the server reads as the cast's type through vector's receive function.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from psycopg import adapters as _psycopg_adapters
from psycopg.adapt import Dumper
from psycopg.pq import Format
from sqlalchemy import Connection, text


def vector_literal(v: Sequence[float]) -> str:
    """pgvector's text form of one vector, for `CAST(:v AS vector)`."""
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


class VectorArray(bytes):
    """A `vector[]` in Postgres' binary array format (see vector_array)."""


class _VectorArrayDumper(Dumper):
    format = Format.BINARY
    oid = 0  # unspecified: the server takes the type from the statement's cast

    def dump(self, obj: VectorArray) -> bytes:
        return bytes(obj)


_psycopg_adapters.register_dumper(VectorArray, _VectorArrayDumper)

_OID_KEY = "engram_vector_oid"


def vector_oid(conn: Connection) -> int:
    """The `vector` type's oid in this database (an extension type: it differs per database),
    asked once per pooled connection."""
    info = conn.connection.info
    if _OID_KEY not in info:
        info[_OID_KEY] = conn.execute(text("SELECT CAST('vector' AS regtype)::oid")).scalar_one()
    return info[_OID_KEY]


def vector_array(conn: Connection, vectors: Sequence[Sequence[float]]) -> VectorArray:
    """`vectors` (each a list or array of floats) as one binary `vector[]` parameter."""
    header = struct.pack(">iiIii", 1, 0, vector_oid(conn), len(vectors), 1)  # 1 dim, no nulls, elem oid, n, lbound
    parts = [header]
    for v in vectors:
        data = np.asarray(v, dtype=">f4")
        if data.ndim != 1 or not 0 < data.shape[0] < 65536:
            raise ValueError(f"a vector must be 1-d with 1-65535 dimensions, got shape {data.shape}")
        parts.append(struct.pack(">iHH", 4 + 4 * data.shape[0], data.shape[0], 0))
        parts.append(data.tobytes())
    return VectorArray(b"".join(parts))


def decode(raw: bytes | memoryview) -> list[float]:
    """A `vector_send(...)` value as a list of floats (the float32 values, exactly)."""
    (dim,) = struct.unpack_from(">H", raw)
    if len(raw) != 4 + 4 * dim:
        raise ValueError(f"a binary vector of {dim} dimensions must be {4 + 4 * dim} bytes, got {len(raw)}")
    return np.frombuffer(raw, dtype=">f4", offset=4).tolist()
