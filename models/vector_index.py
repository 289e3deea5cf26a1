"""The bounds of a per-dataset HNSW index's build parameters, one rule for every place that
takes them: the settings (a clear error for an env var), VectorIndexes (which formats them into
DDL, so it must refuse anything else) and the benches' flags."""

from __future__ import annotations

import re

M_MIN, M_MAX = 2, 100
EF_CONSTRUCTION_MAX = 1000
_MEMORY = re.compile(r"\d+[kMG]B")


def check_build_params(m: int, ef_construction: int) -> None:
    """m within pgvector's bounds, ef_construction from 2 x m (pgvector refuses less) to the maximum."""
    if not M_MIN <= m <= M_MAX:
        raise ValueError(f"HNSW m must be {M_MIN}-{M_MAX}, got {m}")
    if not 2 * m <= ef_construction <= EF_CONSTRUCTION_MAX:
        raise ValueError(f"HNSW ef_construction ({ef_construction}) must be at least 2 x m ({m}) and at most"
                         f" {EF_CONSTRUCTION_MAX}: pgvector refuses a smaller one")


def check_build_memory(value: str | None) -> str | None:
    """A maintenance_work_mem value as Postgres writes one (512MB, 2GB), or None (the server's)."""
    if value is not None and not _MEMORY.fullmatch(value):
        raise ValueError(f"build memory (maintenance_work_mem) must look like 512MB or 2GB, got {value!r}")
    return value
