"""Unit of work: one transaction; repositories hang off it so a stage commits all or nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy import Connection, Engine

from engram.adapters.store.access import AccessRepository
from engram.adapters.store.agentic import AgenticRepository
from engram.adapters.store.browse import BrowseRepository
from engram.adapters.store.capture import CaptureRepository
from engram.adapters.store.embeddings import EmbeddingRepository
from engram.adapters.store.engine import get_engine
from engram.adapters.store.export import ExportRepository
from engram.adapters.store.forget import ForgetRepository
from engram.adapters.store.graph import GraphRepository
from engram.adapters.store.improve import ImproveRepository
from engram.adapters.store.learning import LearningRepository
from engram.adapters.store.maintenance import MaintenanceRepository
from engram.adapters.store.runs import RunRepository
from engram.adapters.store.search import SearchRepository
from engram.adapters.store.sessions import SessionRepository
from engram.adapters.store.vector_indexes import VectorIndexes
from engram.settings import get_settings


class UnitOfWork:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.access = AccessRepository(conn)
        self.runs = RunRepository(conn)
        self.graph = GraphRepository(conn)
        self.search = SearchRepository(conn, ef_search=get_settings().vector_ef_search)
        self.maintenance = MaintenanceRepository(conn)
        self.sessions = SessionRepository(conn)
        self.improve = ImproveRepository(conn)
        self.forget = ForgetRepository(conn)
        self.learning = LearningRepository(conn)
        self.capture = CaptureRepository(conn)
        self.agentic = AgenticRepository(conn)
        self.embeddings = EmbeddingRepository(conn)
        self.browse = BrowseRepository(conn)
        self.export = ExportRepository(conn)


class Store:
    """Units of work over the process's pooled engine (adapters/store/engine.py)."""

    def __init__(self, engine: Engine | None = None):
        self._engine = engine

    @property
    def engine(self) -> Engine:
        return self._engine or get_engine()

    def vector_indexes(self, maintenance_work_mem: str | None = None) -> VectorIndexes:
        """The per-dataset vector indexes' DDL (outside any unit of work: CONCURRENTLY), with the
        configured build parameters; `maintenance_work_mem` overrides the configured build memory."""
        settings = get_settings()
        return VectorIndexes(self.engine, maintenance_work_mem or settings.vector_index_build_memory,
                             m=settings.vector_index_m, ef_construction=settings.vector_index_ef_construction)

    @contextlib.contextmanager
    def unit_of_work(self) -> Iterator[UnitOfWork]:
        with self.engine.begin() as conn:
            yield UnitOfWork(conn)
