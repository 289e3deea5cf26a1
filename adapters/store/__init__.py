"""The one gateway to Postgres: `Store().unit_of_work()` and the repositories on it."""

from engram.adapters.store.uow import Store, UnitOfWork

__all__ = ["Store", "UnitOfWork"]
