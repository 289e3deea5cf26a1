"""What every table module shares: the one MetaData and the timestamp column helpers."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    MetaData,
    func,
)

metadata = MetaData()


def ts_column(name: str, **kw) -> Column:
    return Column(name, DateTime(timezone=True), **kw)


def created_column() -> Column:
    return ts_column("created_at", nullable=False, server_default=func.now())
