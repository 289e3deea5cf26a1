"""engram.export / engram.import: a dataset's memory out in pages and back in parts."""

from __future__ import annotations

import datetime as dt

from engram.adapters.store import Store
from engram.models.payloads.export import ExportPage, ExportRequest, ImportRequest, ImportResult
from engram.pipelines import export
from engram.pipelines.errors import BadInput
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.adapters import staging
from engram.adapters.embed import get_embedder


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


def embedder_port():
    """This deployment's embedder, loaded only when an import must re-embed."""
    return get_embedder(get_settings()).embed


@engram_task("engram.export", payload=ExportRequest)
def export_page(self, req: ExportRequest) -> dict:
    """One page of records (the header with the first); `cursor` null when the export is done."""
    s = get_settings()
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        head = None if req.cursor else uow.export.header(
            dataset, model=s.embedding_model, dimension=s.embedding_dimension, now=now())
        records, cursor = uow.export.page(dataset, req.cursor, req.limit)
    return ExportPage(header=head, records=[{"table": t, "row": r} for t, r in records], cursor=cursor).model_dump()


@engram_task("engram.import", payload=ImportRequest)
def import_part(self, req: ImportRequest) -> dict:
    """Stage a part; the last one imports every staged part in one transaction."""
    if (req.part == 0) != (req.header is not None):
        raise BadInput("part 0, and only part 0, carries the export's header")
    scope = f"import:{req.user}"
    before = staging.stage_part(scope, req.import_id, req.part, {"header": req.header, "records": req.records})
    if before < req.part:
        raise BadInput(f"import {req.import_id}: part {req.part} arrived with {before} parts staged "
                       "(send parts in order from 0, within an hour)")
    if not req.last:
        return ImportResult(status="staged", import_id=req.import_id,
                            parts=max(before, req.part + 1)).model_dump(exclude_unset=True)
    parts = staging.staged_parts(scope, req.import_id)[:req.part + 1]

    def objects():
        yield "header", parts[0]["header"]
        for n, part in enumerate(parts):
            for i, record in enumerate(part["records"]):
                yield f"part {n} record {i + 1}", record

    s = get_settings()
    try:
        result = export.import_records(Store(), objects(), user=req.user, name=req.dataset,
                                       model=s.embedding_model, dimension=s.embedding_dimension,
                                       embed=embedder_port)
    finally:
        staging.drop_parts(scope, req.import_id)
    return ImportResult(**result.as_dict()).model_dump(exclude_unset=True)
