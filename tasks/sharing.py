"""engram.share / engram.unshare: who else may read, write, delete or share a dataset;
engram.datasets: the datasets a user holds a grant on, with their grants and counts."""

from __future__ import annotations

from engram.adapters.store import Store
from engram.adapters.store.access import AccessDenied
from engram.models.payloads import DatasetInfo, DatasetsRequest, DatasetsResult, ShareRequest, ShareResult
from engram.pipelines import ids
from engram.pipelines.errors import BadInput
from engram.tasks.base import engram_task


def _authorised(uow, req: ShareRequest):
    dataset = uow.access.authorise(req.dataset, req.user, "share")
    if uow.access.owner_of(dataset) == ids.user_id(req.grantee) and req.grantee != req.user:
        raise AccessDenied(f"user {req.grantee!r} owns dataset {req.dataset!r}: an owner's grants are not shared")
    return dataset


@engram_task("engram.share", payload=ShareRequest)
def share(self, req: ShareRequest) -> dict:
    """Grant `permissions` on the caller's dataset (own first, else one shared with `share`)."""
    with Store().unit_of_work() as uow:
        dataset = _authorised(uow, req)
        if req.grantee == req.user:
            raise BadInput("a user cannot share a dataset with themselves")
        principal = f"user:{uow.access.ensure_user(req.grantee)}"
        for permission in dict.fromkeys(req.permissions):
            uow.access.grant(dataset, principal, permission)
        now = uow.access.grants_of(dataset, req.grantee)
    return ShareResult(status="shared", dataset=req.dataset, grantee=req.grantee, permissions=now).model_dump()


@engram_task("engram.unshare", payload=ShareRequest)
def unshare(self, req: ShareRequest) -> dict:
    """Revoke `permissions` (all four by default in the client and CLI); the owner keeps theirs."""
    with Store().unit_of_work() as uow:
        dataset = _authorised(uow, req)
        if req.grantee == req.user:
            raise BadInput("a user cannot unshare a dataset from themselves")
        uow.access.revoke(dataset, f"user:{ids.user_id(req.grantee)}", list(req.permissions))
        now = uow.access.grants_of(dataset, req.grantee)
    return ShareResult(status="unshared", dataset=req.dataset, grantee=req.grantee, permissions=now).model_dump()


@engram_task("engram.datasets", payload=DatasetsRequest)
def list_datasets(self, req: DatasetsRequest) -> dict:
    """Every dataset the user holds a grant on: owner, the user's grants (everyone's with the
    share grant), what it holds and its runs by status."""
    with Store().unit_of_work() as uow:
        rows = uow.access.visible(req.user)
        held = {r["id"]: r for r in uow.browse.datasets(ids.user_id(req.user))}  # objects, facts, own
        out = [DatasetInfo(name=r["name"], owner=r["owner"], own=held[r["id"]]["own"], permissions=r["permissions"],
                           grants=r["grants"], created_at=r["created_at"],
                           counts={**uow.graph.counts(r["id"]), "objects": held[r["id"]]["objects"],
                                   "facts": held[r["id"]]["facts"]},
                           runs=uow.runs.counts_by_status(r["id"])) for r in rows]
    return DatasetsResult(datasets=out).model_dump(mode="json")
