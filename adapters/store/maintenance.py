"""Reads and writes of the graph maintenance passes (SPEC 7): neighbourhoods, supersession
tags, `contradicts` edges. Always dataset-scoped.

Maintenance writes never touch an edge's updated_at: it stands in for an undated assertion's
time when supersession orders a group, so bumping it would reorder the group on the next pass.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import edge_intervals, edges, entities
from engram.pipelines import ids
from engram.pipelines.facts import CONTRADICTS
TAGS = ("superseded", "superseded_by", "supersession_reason", "valid_from", "valid_to")


class MaintenanceRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    def neighbourhood(
        self,
        dataset: uuid.UUID,
        touched: Sequence[uuid.UUID] | None,
        *,
        exclude: Iterable[str] = (),
        relationships: Iterable[str] | None = None,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[dict]:
        """Depth-1 edges of `touched` (None = every edge of the dataset) with endpoint names.

        Names are None for endpoints that are not entities (a chunk's `contains` edges).
        """
        s, t = entities.alias("s"), entities.alias("t")
        query = (
            select(
                edges.c.id, edges.c.source_id, edges.c.target_id, edges.c.relationship, edges.c.properties,
                edges.c.edge_text, edges.c.provenance, edges.c.valid_from, edges.c.valid_to,
                edges.c.created_at, edges.c.updated_at, edges.c.superseded, edges.c.superseded_by,
                edges.c.supersession_reason,
                s.c.display_name.label("source_name"), t.c.display_name.label("target_name"),
            )
            .select_from(edges.outerjoin(s, s.c.id == edges.c.source_id).outerjoin(t, t.c.id == edges.c.target_id))
            .where(edges.c.dataset_id == dataset)
        )
        if touched is not None:
            touched = list(touched)
            if not touched:
                return []
            query = query.where(or_(edges.c.source_id.in_(touched), edges.c.target_id.in_(touched)))
        excluded = list(exclude)
        if excluded:
            query = query.where(edges.c.relationship.not_in(excluded))
        if relationships is not None:
            wanted = list(relationships)
            if not wanted:
                return []
            query = query.where(edges.c.relationship.in_(wanted))
        if newest_first:
            query = query.order_by(edges.c.updated_at.desc(), edges.c.id)
        else:
            query = query.order_by(edges.c.created_at, edges.c.id)
        if limit is not None:
            query = query.limit(limit)
        return [dict(r) for r in self.conn.execute(query).mappings()]

    # ------------------------------------------------------------ supersession

    def assertions(self, edge_ids: Sequence[uuid.UUID]) -> list[dict]:
        """The validity intervals of these edges (stated and computed columns), oldest first."""
        wanted = list(edge_ids)
        if not wanted:
            return []
        i = edge_intervals
        rows = self.conn.execute(
            select(i.c.id, i.c.edge_id, i.c.valid_from, i.c.valid_to, i.c.ended, i.c.asserted_at, i.c.created_at,
                   i.c.functional, i.c.starts_at, i.c.ends_at, i.c.superseded_by)
            .where(i.c.edge_id.in_(wanted)).order_by(i.c.created_at, i.c.id)
        ).mappings()
        return [dict(r) for r in rows]

    def write_intervals(self, dataset: uuid.UUID, verdicts: Iterable[dict[str, Any]]) -> int:
        """Upsert computed interval columns; a fact with no stated interval gets its row here
        (created_at = when Engram learned the edge)."""
        rows = [{"id": v["id"], "edge_id": v["edge_id"], "dataset_id": dataset, "created_at": v["learned"],
                 "functional": True, "starts_at": v["starts_at"], "ends_at": v["ends_at"],
                 "superseded_by": v["superseded_by"]} for v in verdicts]
        if not rows:
            return 0
        stmt = insert(edge_intervals).values(rows)
        self.conn.execute(stmt.on_conflict_do_update(
            index_elements=[edge_intervals.c.id],
            set_={"functional": True, "starts_at": stmt.excluded.starts_at, "ends_at": stmt.excluded.ends_at,
                  "superseded_by": stmt.excluded.superseded_by}))
        return len(rows)

    def tag_supersession(self, tagged: Iterable[tuple[uuid.UUID, dict[str, Any]]]) -> int:
        """Write superseded / superseded_by / supersession_reason / valid_from / valid_to."""
        n = 0
        for edge, tags in tagged:
            values = {k: tags.get(k) for k in TAGS}
            values["superseded"] = bool(values["superseded"])
            n += self.conn.execute(update(edges).where(edges.c.id == edge).values(**values)).rowcount
        return n

    # ------------------------------------------------------------ contradictions

    def write_contradictions(self, dataset: uuid.UUID, found: Sequence[dict[str, Any]]) -> list[uuid.UUID]:
        """Upsert `contradicts` edges: {source_id, target_id, properties, edge_text, provenance}.

        Identity is (source, target, contradicts), so a rerun updates instead of duplicating;
        an unchanged judgement leaves the row untouched.
        """
        rows: dict[uuid.UUID, dict[str, Any]] = {}
        for c in found:
            eid = ids.edge_id(dataset, c["source_id"], c["target_id"], CONTRADICTS)
            previous = rows.get(eid)
            # One edge per endpoint pair: the most confident judgement (then the first) stands.
            if previous is None or c["properties"]["confidence"] > previous["properties"]["confidence"]:
                rows[eid] = {"id": eid, "dataset_id": dataset, "source_id": c["source_id"],
                             "target_id": c["target_id"], "relationship": CONTRADICTS,
                             "properties": c["properties"], "edge_text": c["edge_text"],
                             "provenance": sorted(set(c["provenance"]), key=str)}
        if not rows:
            return []
        stmt = insert(edges).values(list(rows.values()))
        changed = (
            edges.c.properties.is_distinct_from(stmt.excluded.properties)
            | edges.c.provenance.is_distinct_from(stmt.excluded.provenance)
            | edges.c.edge_text.is_distinct_from(stmt.excluded.edge_text)
        )
        self.conn.execute(
            stmt.on_conflict_do_update(
                constraint="uq_edges_identity",
                set_={"properties": stmt.excluded.properties, "provenance": stmt.excluded.provenance,
                      "edge_text": stmt.excluded.edge_text, "updated_at": func.now()},
                where=changed,
            )
        )
        return list(rows)
