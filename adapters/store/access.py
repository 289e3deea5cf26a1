"""Users, datasets and grants. Every read and write path asks here first."""

from __future__ import annotations

import uuid

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import dataset_grants, datasets, users
from engram.pipelines import ids

PERMISSIONS = ("read", "write", "delete", "share")


class AccessDenied(PermissionError):
    """The user lacks the grant; the message names user, dataset and permission."""


class UnknownDataset(LookupError):
    pass


class AccessRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    def ensure_user(self, name: str) -> uuid.UUID:
        uid = ids.user_id(name)
        self.conn.execute(insert(users).values(id=uid, name=name).on_conflict_do_nothing())
        return uid

    def create_dataset(self, owner: str, name: str) -> uuid.UUID:
        """Create (or find) `name` owned by `owner`; the owner gets every permission."""
        owner_id = self.ensure_user(owner)
        did = ids.dataset_id(owner_id, name)
        self.conn.execute(insert(datasets).values(id=did, name=name, owner_id=owner_id).on_conflict_do_nothing())
        for permission in PERMISSIONS:
            self.grant(did, f"user:{owner_id}", permission)
        return did

    def grant(self, dataset: uuid.UUID, principal: str, permission: str) -> None:
        if permission not in PERMISSIONS:
            raise ValueError(f"unknown permission {permission!r}; expected one of {', '.join(PERMISSIONS)}")
        self.conn.execute(
            insert(dataset_grants)
            .values(dataset_id=dataset, principal=principal, permission=permission)
            .on_conflict_do_nothing()
        )

    def revoke(self, dataset: uuid.UUID, principal: str, permissions: list[str]) -> None:
        self.conn.execute(delete(dataset_grants).where(
            dataset_grants.c.dataset_id == dataset, dataset_grants.c.principal == principal,
            dataset_grants.c.permission.in_(permissions)))

    def grants_of(self, dataset: uuid.UUID, user: str) -> list[str]:
        principal = f"user:{ids.user_id(user)}"
        rows = self.conn.execute(select(dataset_grants.c.permission).where(
            dataset_grants.c.dataset_id == dataset, dataset_grants.c.principal == principal)).scalars()
        return sorted(rows, key=PERMISSIONS.index)

    def owner_of(self, dataset: uuid.UUID) -> uuid.UUID | None:
        return self.conn.execute(select(datasets.c.owner_id).where(datasets.c.id == dataset)).scalar()

    def find_own(self, name: str, user: str) -> uuid.UUID | None:
        """The user's own dataset of that name (never a shared one: sharing never blocks a name)."""
        return self.conn.execute(
            select(datasets.c.id).where(datasets.c.owner_id == ids.user_id(name=user), datasets.c.name == name)
        ).scalar()

    def find_dataset(self, name: str, user: str) -> uuid.UUID | None:
        """A dataset by name: the user's own first, else one shared with the user."""
        uid = ids.user_id(name=user)
        own = self.conn.execute(
            select(datasets.c.id).where(datasets.c.owner_id == uid, datasets.c.name == name)
        ).scalar()
        if own is not None:
            return own
        return self.conn.execute(
            select(datasets.c.id)
            .join(dataset_grants, dataset_grants.c.dataset_id == datasets.c.id)
            .where(datasets.c.name == name, dataset_grants.c.principal == f"user:{uid}")
            .order_by(datasets.c.created_at)
            .limit(1)
        ).scalar()

    def has_permission(self, dataset: uuid.UUID, user: str, permission: str) -> bool:
        uid = ids.user_id(user)
        row = self.conn.execute(
            select(dataset_grants.c.permission).where(
                dataset_grants.c.dataset_id == dataset,
                dataset_grants.c.principal == f"user:{uid}",
                dataset_grants.c.permission == permission,
            )
        ).first()
        return row is not None

    def may(self, dataset: uuid.UUID | None, user: str, permission: str) -> bool:
        """Whether `user` holds `permission` on the dataset of a run, entry or claim (by id)."""
        return dataset is not None and self.has_permission(dataset, user, permission)

    def authorise(self, dataset_name: str, user: str, permission: str) -> uuid.UUID:
        """The dataset's id if `user` holds `permission` on it, else a clear error."""
        dataset = self.find_dataset(dataset_name, user)
        if dataset is None:
            raise UnknownDataset(f"dataset {dataset_name!r} does not exist for user {user!r}")
        if not self.has_permission(dataset, user, permission):
            raise AccessDenied(f"user {user!r} has no {permission} grant on dataset {dataset_name!r}")
        return dataset

    def dataset_name(self, dataset: uuid.UUID) -> str | None:
        return self.conn.execute(select(datasets.c.name).where(datasets.c.id == dataset)).scalar()

    def visible(self, user: str) -> list[dict]:
        return visible_datasets(self.conn, user)


def require_run(uow, row: dict | None, ref, user: str, permission: str, what: str = "run") -> None:
    """A run, entry or claim found by id is the caller's only with a grant on its dataset.

    An id the caller may not even read gets the same answer as an unknown id (no existence leak).
    """
    dataset = row["dataset_id"] if row else None
    if row is None or not uow.access.may(dataset, user, "read"):
        raise UnknownDataset(f"{what} {ref} does not exist for user {user!r}")
    if permission != "read" and not uow.access.may(dataset, user, permission):
        raise AccessDenied(f"user {user!r} has no {permission} grant on the dataset of {what} {ref}")


def _principal_names(conn: Connection, principals: set[str]) -> dict[str, str]:
    """user:<uuid> → the user's name; role:<name> stays as it is."""
    uids = [uuid.UUID(p.split(":", 1)[1]) for p in principals if p.startswith("user:")]
    names = dict(conn.execute(select(users.c.id, users.c.name).where(users.c.id.in_(uids))).all()) if uids else {}
    return {p: names.get(uuid.UUID(p[5:]), p) if p.startswith("user:") else p for p in principals}


def visible_datasets(conn: Connection, user: str) -> list[dict]:
    """Every dataset `user` holds a grant on: name, owner, the user's own permissions and, where
    the user may share it, everyone's grants (a reader does not learn who else reads)."""
    me = f"user:{ids.user_id(user)}"
    mine = conn.execute(
        select(datasets.c.id, datasets.c.name, datasets.c.owner_id, datasets.c.created_at, dataset_grants.c.permission)
        .join(dataset_grants, dataset_grants.c.dataset_id == datasets.c.id)
        .where(dataset_grants.c.principal == me)
        .order_by(datasets.c.name, datasets.c.created_at)
    ).all()
    out: dict[uuid.UUID, dict] = {}
    for did, name, owner, created, permission in mine:
        row = out.setdefault(did, {"id": did, "name": name, "owner_id": owner, "created_at": created,
                                   "permissions": [], "grants": None})
        row["permissions"].append(permission)
    shared = [d for d, row in out.items() if "share" in row["permissions"]]
    grants = conn.execute(select(dataset_grants.c.dataset_id, dataset_grants.c.principal, dataset_grants.c.permission)
                          .where(dataset_grants.c.dataset_id.in_(shared))).all() if shared else []
    owners = {f"user:{row['owner_id']}" for row in out.values()}
    names = _principal_names(conn, owners | {p for _, p, _ in grants})
    for row in out.values():
        row["permissions"].sort(key=PERMISSIONS.index)
        row["owner"] = names[f"user:{row.pop('owner_id')}"]
        if row["id"] in shared:
            row["grants"] = {}
    for did, principal, permission in grants:
        out[did]["grants"].setdefault(names[principal], []).append(permission)
    for row in out.values():
        for perms in (row["grants"] or {}).values():
            perms.sort(key=PERMISSIONS.index)
    return list(out.values())
