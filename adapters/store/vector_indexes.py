"""Filtered vector search that holds as the tables grow (issue #38): each big dataset gets its own
HNSW graph on every vector table recall reads, the small ones are scanned exactly.

One HNSW index shared by every dataset serves a dataset filter badly: the scan walks the other
datasets' vectors (a filter to 1.6 % of the table cost as much as the exact scan) and misses
neighbours the filter keeps (recall@10 0.83-0.86 at 50k chunks). So recall's vector reads are a
UNION of one ORDER BY ... LIMIT per dataset that has its own partial index `vx_<table>_<dataset
hex>` (its id written as a literal: the planner uses a partial index only for a predicate it
sees, in a generic plan too) and one exact scan (btree on dataset_id, then distances) of the
filter's other datasets, re-sorted by distance. A maintenance sweep builds the indexes (CREATE
INDEX CONCURRENTLY) once a dataset passes OWN_INDEX_ROWS rows in a table; forget drops them.
A filter over many datasets with their own index (MAX_GRAPHS) reads the shared index instead:
one graph walk, not one per dataset.
An own index is built on the half-precision copy of the vector (`embedding::halfvec(D)`,
halfvec_cosine_ops) and its read orders by that expression, so the planner cannot answer it
from the shared index instead: on the same column and operator it could, and did whenever the
own graph's cost estimate (which grows with m) passed the shared one's: at m 32 it walked the
shared graph with the filter, recall@10 0.43 instead of the own graph's. The rows it returns are
re-ranked by their full-precision distance; the half-precision graph takes about 40 % fewer bytes.
A build that fails (shared memory, a cancelled statement) does not stop the sweep's other builds,
and waits before it is tried again (RETRY_FIRST_S, doubled per failure up to RETRY_MAX_S;
migration 0023's vector_index_failures).
Figures and the rationale: bench/NOTES.md "Filtered vector search", bench/RESULTS.md "Scale".
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from engram.models.vector_index import check_build_memory, check_build_params

log = logging.getLogger(__name__)

# The vector tables recall reads under a dataset filter (each has a btree leading on dataset_id).
VECTOR_TABLES = ("chunks", "chunk_windows", "summaries", "entities", "edges")
# The rule (bench/NOTES.md "Filtered vector search"): each dataset with its own index (built past
# OWN_INDEX_ROWS rows) is read through it, the filter's other datasets exactly if they hold
# < EXACT_MAX_CHUNKS chunks together; the rest, or a filter over MAX_GRAPHS+ own indexes, through the shared index.
OWN_INDEX_ROWS = 2_000
EXACT_MAX_CHUNKS = 2_000
MAX_GRAPHS = 16
# hnsw.ef_search of every vector read (bench/NOTES.md: recall@10 >= 0.95 at 100k chunks).
EF_SEARCH = 100
# The own indexes' build parameters unless configured (ENGRAM_VECTOR_INDEX_M / _EF_CONSTRUCTION): at
# 200k chunks recall@10 0.99-1.00 under every filter at ef_search 100, where pgvector's 16 / 64 found
# 0.77-0.96 (bench/RESULTS.md "Scale", 2026-12-07 22:04-22:53 UTC), for 4.5 times the build.
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 256
PGVECTOR_DEFAULTS = (16, 64)  # what an index built without WITH (m, ef_construction) has
# A failed build waits this long before the next try, twice as long after each further failure, at most RETRY_MAX_S.
RETRY_FIRST_S, RETRY_MAX_S = 900, 86_400
PREFIX = "vx_"
REBUILT = "_r"  # suffix of an own index's replacement while it is built


def index_name(table: str, dataset: uuid.UUID) -> str:
    assert table in VECTOR_TABLES, table
    return f"{PREFIX}{table}_{uuid.UUID(str(dataset)).hex}"


class Route(NamedTuple):
    """How a read reaches a table's rows of the filter's datasets."""

    own: list[uuid.UUID]  # datasets read through their own HNSW index
    rest: list[uuid.UUID]  # the others: one scan
    exact: bool  # that scan exact (else through the shared index, iterative scan)
    dims: int = 0  # the vectors' dimension (the own indexes' halfvec(dims) expression)


def routes(conn: Connection, tables: Sequence[str], datasets: Sequence[uuid.UUID]) -> dict[str, Route]:
    """Per table, how the read reaches the datasets' rows: the rule above, chunk counts from
    chunk_lex_stats (migration 0020) standing in for every vector table's."""
    if not datasets:
        return {t: Route([], [], True) for t in tables}
    chunks = dict(conn.execute(text("SELECT dataset_id, chunks FROM chunk_lex_stats WHERE dataset_id = ANY(:d)"),
                               {"d": list(datasets)}).all())
    wanted = {index_name(t, d): (t, d) for t in tables for d in datasets}
    # Valid own indexes of the current form (an older full-precision one counts as none until rebuilt).
    found = dict(conn.execute(text(
        "SELECT n, a.atttypmod FROM unnest(CAST(:n AS text[])) n JOIN pg_index i ON i.indexrelid = to_regclass(n)"
        " JOIN pg_attribute a ON a.attrelid = i.indexrelid AND a.attnum = 1"
        " WHERE i.indisvalid AND i.indisready AND a.atttypid = to_regtype('halfvec')"), {"n": sorted(wanted)}).all())
    out = {}
    for table in tables:
        own = [d for d in datasets if index_name(table, d) in found]
        rest = [d for d in datasets if index_name(table, d) not in found]
        dims = found[index_name(table, own[0])] if own else 0
        out[table] = (Route(own, rest, sum(chunks.get(d, 0) for d in rest) < EXACT_MAX_CHUNKS, dims)
                      if len(own) < MAX_GRAPHS else Route([], list(datasets), False))
    return out


def nearest_sql(table: str, alias: str, columns: str, where: str, route: Route, limit: str = ":k",
                rest: str = ":rest") -> str:
    """SQL of the `limit` rows of `table` (as `alias`) nearest :v among the route's datasets that
    pass `where` (an " AND ..." condition on `alias`): `columns` and `distance`, nearest first.
    The caller binds the route's `rest` datasets as `rest`."""
    distance = f"{alias}.embedding <=> CAST(:v AS vector)"
    base = f"SELECT {columns}, {distance} AS distance FROM {table} {alias} WHERE {alias}.embedding IS NOT NULL{where}"
    # An own index's order: its expression, which the shared index cannot serve; rows keep their exact distance.
    half = f"{alias}.embedding::halfvec({int(route.dims)}) <=> CAST(:v AS halfvec({int(route.dims)}))"
    parts = [f"({base} AND {alias}.dataset_id = '{uuid.UUID(str(d))}' ORDER BY {half} LIMIT {limit})"
             for d in route.own]
    if route.rest and route.exact:  # OFFSET 0: planned alone, so no index order reaches it: an exact scan
        parts.append(f"(SELECT * FROM ({base} AND {alias}.dataset_id = ANY(CAST({rest} AS uuid[])) OFFSET 0) x"
                     f" ORDER BY distance LIMIT {limit})")
    elif route.rest:
        parts.append(f"({base} AND {alias}.dataset_id = ANY(CAST({rest} AS uuid[])) ORDER BY {distance} LIMIT {limit})")
    if not parts:
        return f"{base} AND false"
    return f"SELECT * FROM ({' UNION ALL '.join(parts)}) u ORDER BY distance LIMIT {limit}"


class VectorIndexes:
    """The per-dataset indexes' life: built past the threshold, dropped with the dataset's rows.
    DDL outside any transaction (CONCURRENTLY: the table stays writable meanwhile)."""

    def __init__(self, engine: Engine, maintenance_work_mem: str | None = None, m: int = HNSW_M,
                 ef_construction: int = HNSW_EF_CONSTRUCTION):
        self.engine = engine
        # The graph builds in memory (a 400k-vector graph needs ~1 GB); None: the server's setting.
        self.memory = check_build_memory(maintenance_work_mem)
        # The graph's build parameters: an own index built with others is rebuilt by the sweep.
        self.params = (int(m), int(ef_construction))
        check_build_params(*self.params)

    def _ddl(self, statements: Iterable[str]) -> None:
        with self.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            for statement in statements:
                conn.execute(text(statement))

    def present(self) -> dict[str, bool]:
        """Every per-dataset vector index by name: valid or not (a failed concurrent build's)."""
        return {name: valid for name, (valid, _) in self._indexes().items()}

    def _indexes(self) -> dict[str, tuple[bool, tuple[int, int, bool]]]:
        """Every per-dataset vector index (replacements being built included): valid, (m,
        ef_construction, of the current half-precision form)."""
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT c.relname, i.indisvalid, c.reloptions, a.atttypid = to_regtype('halfvec') FROM pg_class c"
                " JOIN pg_index i ON i.indexrelid = c.oid JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1"
                " WHERE c.relname LIKE :p AND c.relnamespace = current_schema()::regnamespace"),
                {"p": PREFIX.replace("_", r"\_") + "%"}).all()
        out = {}
        for name, valid, options, half in rows:
            given = dict(o.split("=", 1) for o in options or [])
            out[name] = (valid, (int(given.get("m", PGVECTOR_DEFAULTS[0])),
                                 int(given.get("ef_construction", PGVECTOR_DEFAULTS[1])),
                                 bool(half)))
        return out

    def stale(self) -> list[str]:
        """Valid own indexes built with other parameters than this one's (m, ef_construction) or
        in the older full-precision form (which recall no longer reads)."""
        return sorted(n for n, (valid, params) in self._indexes().items()
                      if valid and not n.endswith(REBUILT) and params != (*self.params, True))

    def due(self, rows: int = OWN_INDEX_ROWS) -> list[tuple[str, uuid.UUID]]:
        """(table, dataset) pairs at `rows` or more rows without a valid own index."""
        present = {n for n, valid in self.present().items() if valid}
        out = []
        with self.engine.connect() as conn:
            for table in VECTOR_TABLES:
                big = conn.execute(text(f"SELECT dataset_id FROM {table} GROUP BY dataset_id"  # noqa: S608 - fixed names
                                        " HAVING count(*) >= :n ORDER BY dataset_id"), {"n": rows}).scalars().all()
                out += [(table, d) for d in big if index_name(table, d) not in present]
        return out

    def build(self, table: str, dataset: uuid.UUID) -> str:
        """The dataset's own index on the table (a failed build's leftover dropped first)."""
        name = index_name(table, dataset)
        statements = [] if self.present().get(name, True) else [f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"']
        if self.memory:
            statements.append(f"SET maintenance_work_mem = '{self.memory}'")
        statements.append(self._create(name, table, dataset))
        self._ddl(statements)
        return name

    def _create(self, name: str, table: str, dataset: uuid.UUID) -> str:
        m, construction = self.params
        with self.engine.connect() as conn:  # the column's dimension: halfvec needs it spelled out
            dims = conn.execute(text("SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(:t)"
                                     " AND attname = 'embedding'"), {"t": table}).scalar_one()
        return (f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{name}" ON {table}'
                f" USING hnsw ((embedding::halfvec({int(dims)})) halfvec_cosine_ops)"
                f" WITH (m = {m}, ef_construction = {construction}) WHERE dataset_id = '{uuid.UUID(str(dataset))}'")

    def rebuild(self, name: str) -> str:
        """Replace an own index by one with this one's parameters: the replacement is built
        beside it (CONCURRENTLY, a failed one's leftover dropped first), then the old one
        dropped and the replacement renamed. Between the two, recall reads the dataset as it
        reads one without an own index (right, slower)."""
        table = next(t for t in VECTOR_TABLES if name == f"{PREFIX}{t}_{name[-32:]}")
        statements = [f'DROP INDEX CONCURRENTLY IF EXISTS "{name}{REBUILT}"']
        if self.memory:
            statements.append(f"SET maintenance_work_mem = '{self.memory}'")
        statements += [self._create(name + REBUILT, table, uuid.UUID(name[-32:])),
                       f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"', f'ALTER INDEX "{name}{REBUILT}" RENAME TO "{name}"']
        self._ddl(statements)
        return name

    def _finish_replacements(self) -> list[str]:
        """A sweep that died mid-rebuild: a valid replacement whose old index is gone is renamed
        into place; any other replacement is dropped (the next rebuild starts over)."""
        indexes, done = self._indexes(), []
        for name, (valid, _) in indexes.items():
            if name.endswith(REBUILT):
                base = name[: -len(REBUILT)]
                if valid and base not in indexes:
                    self._ddl([f'ALTER INDEX "{name}" RENAME TO "{base}"'])
                    done.append(base)
                else:
                    self._ddl([f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'])
        return done

    def drop(self, datasets: Sequence[uuid.UUID]) -> list[str]:
        """Drop the datasets' own indexes (forget: after the rows went)."""
        present = self.present()
        names = [n for d in datasets for t in VECTOR_TABLES for n in (index_name(t, d), index_name(t, d) + REBUILT)
                 if n in present]
        self._ddl(f'DROP INDEX CONCURRENTLY IF EXISTS "{n}"' for n in names)
        self._forget_failures([index_name(t, d) for d in datasets for t in VECTOR_TABLES])
        return names

    def orphans(self) -> list[str]:
        """Own indexes whose dataset holds no rows in their table any more (a forget that died
        between its commit and the drop, a dataset emptied item by item or deleted)."""
        owner = {f"{PREFIX}{t}_": t for t in VECTOR_TABLES}
        out = []
        with self.engine.connect() as conn:
            for name in self.present():
                table = next((t for p, t in owner.items() if name.startswith(p) and len(name) == len(p) + 32), None)
                if table and conn.execute(text(f"SELECT NOT EXISTS (SELECT 1 FROM {table}"  # noqa: S608 - fixed names
                                               " WHERE dataset_id = :d)"), {"d": uuid.UUID(name[-32:])}).scalar_one():
                    out.append(name)
        return out

    def failures(self) -> dict[str, dict]:
        """Indexes whose last build or rebuild failed: failures, last_error, retry_after."""
        with self.engine.connect() as conn:
            rows = conn.execute(text("SELECT name, failures, last_error, retry_after, retry_after > now()"
                                     " FROM vector_index_failures")).all()
        return {r[0]: {"failures": r[1], "last_error": r[2], "retry_after": r[3], "waiting": r[4]} for r in rows}

    def _attempt(self, name: str, action) -> bool:
        """Run a build or rebuild; a database error is recorded (the next try waits), not raised."""
        try:
            action()
        except DBAPIError as exc:
            error = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:500]
            log.warning("vector index %s failed, the sweep tries it again later: %s", name, error)
            with self.engine.begin() as conn:
                conn.execute(text(
                    "INSERT INTO vector_index_failures AS f (name, failures, last_error, retry_after)"
                    " VALUES (:n, 1, :e, now() + make_interval(secs => :first))"
                    " ON CONFLICT (name) DO UPDATE SET failures = f.failures + 1, last_error = :e, failed_at = now(),"
                    " retry_after = now() + make_interval(secs => least(:first * power(2, f.failures), :most))"),
                    {"n": name, "e": error, "first": RETRY_FIRST_S, "most": RETRY_MAX_S})
            return False
        self._forget_failures([name])
        return True

    def _forget_failures(self, names: Sequence[str]) -> None:
        if names:
            with self.engine.begin() as conn:
                conn.execute(text("DELETE FROM vector_index_failures WHERE name = ANY(:n)"), {"n": list(names)})

    def sweep(self, rows: int = OWN_INDEX_ROWS) -> dict:
        """Drop orphans, build what is due, rebuild what has other parameters: the beat's maintenance pass (one at a time: an
        advisory lock, held by a session outside any transaction so concurrent builds can finish).
        An index whose last try failed waits (RETRY_FIRST_S, doubling): listed as `waiting`."""
        with self.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            if not conn.execute(text("SELECT pg_try_advisory_lock(hashtext('engram.vector_indexes'))")).scalar_one():
                return {"built": [], "rebuilt": [], "dropped": [], "failed": [], "waiting": [], "skipped": True}
            try:
                self._finish_replacements()
                gone = self.orphans()
                self._ddl(f'DROP INDEX CONCURRENTLY IF EXISTS "{n}"' for n in gone)
                due, stale = self.due(rows), self.stale()
                pending = {index_name(t, d) for t, d in due} | set(stale)
                known = self.failures()
                # A failure whose index is neither due nor stale any more (built by hand, dataset gone) is history.
                self._forget_failures([n for n in known if n not in pending])
                waiting = sorted(n for n, f in known.items() if f["waiting"] and n in pending)
                built, rebuilt, failed = [], [], []
                for table, dataset in due:
                    name = index_name(table, dataset)
                    if name not in waiting:
                        (built if self._attempt(name, lambda t=table, d=dataset: self.build(t, d)) else failed).append(name)
                for name in stale:
                    if name not in waiting:
                        (rebuilt if self._attempt(name, lambda n=name: self.rebuild(n)) else failed).append(name)
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(hashtext('engram.vector_indexes'))"))
        return {"built": built, "rebuilt": rebuilt, "dropped": gone, "failed": failed, "waiting": waiting}
