"""Engram's data in Postgres, read and written only through `Store().unit_of_work()` and the
repositories on it (adapters/services only creates the embedded server's database; schema
changes go through migrate.py)."""

from engram.adapters.store.uow import Store, UnitOfWork

__all__ = ["Store", "UnitOfWork"]
