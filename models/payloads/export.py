"""engram.export / engram.import: a dataset's memory out and in, in parts (pipelines/export.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engram.models.payloads.base import NAME, Payload


class ExportRequest(Payload):
    """One page of a dataset's jsonl export (read grant). The first page (no cursor) carries the
    header; pass each page's `cursor` back for the next, until it is null."""

    dataset: str = Field(pattern=NAME)
    user: str = Field(default="default", pattern=NAME)
    cursor: str | None = Field(default=None, max_length=4000)
    limit: int = Field(default=500, ge=1, le=5000)


class ImportRequest(Payload):
    """One part of an import: part 0 carries the export's `header`, every part some `records`
    in file order; parts are staged (an hour) until the part with `last`, which imports them all
    in one transaction as the caller's own dataset (`dataset`, default the exported name)."""

    import_id: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,100}$")
    user: str = Field(default="default", pattern=NAME)
    part: int = Field(ge=0, le=1_000_000)
    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = Field(default_factory=list, max_length=5000)
    last: bool = False
    dataset: str | None = Field(default=None, pattern=NAME)


class ExportPage(BaseModel):
    """What one engram.export call returns: the header (first page only), records
    `{"table", "row"}` in file order, and the cursor of the next page (null on the last)."""

    header: dict[str, Any] | None = None
    records: list[dict[str, Any]]
    cursor: str | None = None


class ImportResult(BaseModel):
    """What engram.import returns: `staged` (with `parts` staged so far) or, for the last part,
    `imported` with the new dataset, its id, the rows per table and whether vectors were reused."""

    status: str
    import_id: str | None = None
    parts: int | None = None
    dataset: str | None = None
    dataset_id: str | None = None
    counts: dict[str, int] | None = None
    vectors: str | None = None
    reembedded: int | None = None
