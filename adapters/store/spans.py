"""The effective span (starts_at, ends_at) of validity intervals no supersession pass judges.

A statement of an end alone closes the open statements of its edge (pipelines/intervals.py), so
an edge's spans are recomputed from all its rows whenever one is added or removed. Rows of
functional relationships (`functional`) belong to the supersession pass and are left alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Connection, bindparam, select, update

from engram.models.tables import edge_intervals
from engram.pipelines.dates import utc
from engram.pipelines.intervals import Statement, by_edge, unjudged_spans


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and utc(a) == utc(b))


def refresh_spans(conn: Connection, edge_ids: Iterable[uuid.UUID]) -> int:
    """Rewrite the unjudged rows of these edges whose span changed; returns how many."""
    wanted = sorted(set(edge_ids), key=str)
    if not wanted:
        return 0
    i = edge_intervals
    rows = conn.execute(
        select(i.c.id, i.c.edge_id, i.c.valid_from, i.c.valid_to, i.c.ended, i.c.asserted_at, i.c.created_at,
               i.c.functional, i.c.starts_at, i.c.ends_at)
        .where(i.c.edge_id.in_(wanted)).order_by(i.c.id)
    ).mappings().all()
    found = by_edge(rows, lambda r: r["edge_id"], lambda r: Statement(
        r["id"], r["valid_from"], r["valid_to"], bool(r["ended"]), r["asserted_at"], r["created_at"]),
        unjudged_spans)
    changed = [{"row": r["id"], "s": found[r["id"]][0], "e": found[r["id"]][1]} for r in rows
               if not r["functional"] and not (_same(found[r["id"]][0], r["starts_at"])
                                               and _same(found[r["id"]][1], r["ends_at"]))]
    if changed:
        conn.execute(update(i).where(i.c.id == bindparam("row"))
                     .values(starts_at=bindparam("s"), ends_at=bindparam("e")), changed)
    return len(changed)
