"""What improve learns: lessons and writer decisions (distillation), user preferences, and the
truth basis with its chunk stamps (SPEC 6.3, 6.4)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Connection, select, text, update
from sqlalchemy.dialects.postgresql import insert

from engram.adapters.store.search_sql import facts_only
from engram.adapters.store.vectors import vector_literal
from engram.models.tables import (
    lesson_decisions,
    lessons,
    session_improve_state,
    truth_bases,
    truth_centroids,
    user_preferences,
)
from engram.pipelines.improve.truth import K, Basis


class LearningRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    # ------------------------------------------------------------ distillation watermark

    def distill_watermarks(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> dict[str, int]:
        rows = self.conn.execute(select(session_improve_state.c.session_id, session_improve_state.c.distill_watermark_seq)
                                 .where(session_improve_state.c.dataset_id == dataset_id,
                                        session_improve_state.c.session_id.in_(list(session_ids)))).all()
        found = {r[0]: int(r[1]) for r in rows}
        return {s: found.get(s, 0) for s in session_ids}

    def advance_distill_watermark(self, dataset_id: uuid.UUID, session_id: str, seq: int) -> None:
        c = session_improve_state.c
        self.conn.execute(update(session_improve_state).where(c.dataset_id == dataset_id, c.session_id == session_id)
                          .values(distill_watermark_seq=text(f"greatest(distill_watermark_seq, {int(seq)})")))

    def gated_pending(self, dataset_id: uuid.UUID, session_ids: Sequence[str], min_confidence: float) -> dict[str, int]:
        """Per session, usable entries above the distillation watermark (the probe's view)."""
        rows = self.conn.execute(text(
            "SELECT e.session_id, count(*) FROM session_entries e LEFT JOIN session_improve_state s"
            " ON s.dataset_id = e.dataset_id AND s.session_id = e.session_id"
            " WHERE e.dataset_id = :d AND e.session_id = ANY(:ss) AND e.seq > coalesce(s.distill_watermark_seq, 0)"
            " AND e.harmful_count = 0 AND e.confidence >= :c GROUP BY e.session_id"),
            {"d": dataset_id, "ss": list(session_ids), "c": min_confidence}).all()
        return {r[0]: int(r[1]) for r in rows}

    # ------------------------------------------------------------ writer inputs

    def entries(self, dataset_id: uuid.UUID, entry_ids) -> list[dict]:
        """Session entries of the dataset by id (a writer's member entries)."""
        wanted = []
        for e in entry_ids:
            try:
                wanted.append(uuid.UUID(str(e)))
            except ValueError:
                continue  # a curator may cite garbage; it resolves to nothing
        rows = self.conn.execute(text("SELECT * FROM session_entries WHERE dataset_id = :d AND id = ANY(:ids)"),
                                 {"d": dataset_id, "ids": wanted}).mappings()
        return [dict(r) for r in rows]

    def similar_lessons(self, dataset_id: uuid.UUID, vector: Sequence[float], limit: int) -> list[str]:
        rows = self.conn.execute(text(
            "SELECT statement FROM lessons WHERE dataset_id = :d AND embedding IS NOT NULL"
            " ORDER BY embedding <=> CAST(:v AS vector), id LIMIT :k"),
            {"d": dataset_id, "v": vector_literal(vector), "k": limit}).scalars().all()
        return list(rows)

    def glossary(self, dataset_id: uuid.UUID, vector: Sequence[float], limit: int) -> list[str]:
        """Names of the dataset's entities nearest the text (the writer's glossary)."""
        rows = self.conn.execute(text(
            "SELECT coalesce(display_name, name) FROM entities WHERE dataset_id = :d AND embedding IS NOT NULL"
            " ORDER BY embedding <=> CAST(:v AS vector), id LIMIT :k"),
            {"d": dataset_id, "v": vector_literal(vector), "k": limit}).scalars().all()
        return list(rows)

    # ------------------------------------------------------------ lessons and decisions

    def existing_lessons(self, ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        return set(self.conn.execute(select(lessons.c.id).where(lessons.c.id.in_(list(ids)))).scalars().all())

    def add_lesson(self, *, lesson_id: uuid.UUID, dataset_id: uuid.UUID, session_id: str, statement: str,
                   why_learned: str, entities: Sequence[str], member_entry_ids: Sequence[str],
                   data_item_id: uuid.UUID, run_id: uuid.UUID | None, vector: Sequence[float]) -> bool:
        """Insert once; False when the lesson already exists (a retry, or another session's)."""
        row = self.conn.execute(insert(lessons).values(
            id=lesson_id, dataset_id=dataset_id, session_id=session_id, statement=statement,
            why_learned=why_learned, entities=list(entities), member_entry_ids=list(member_entry_ids),
            data_item_id=data_item_id, improve_run_id=run_id, embedding=list(vector),
        ).on_conflict_do_nothing().returning(lessons.c.id)).first()
        return row is not None

    def record_decisions(self, rows: Sequence[dict]) -> None:
        """Writer decisions; id is deterministic per (run, statement) so a redelivery upserts."""
        for r in rows:
            self.conn.execute(insert(lesson_decisions).values(**r).on_conflict_do_update(
                index_elements=["id"], set_={k: r[k] for k in ("accepted", "reason", "statement", "why_learned",
                                                               "lesson_id", "error")}))

    def lessons_of(self, dataset_id: uuid.UUID, session_id: str | None = None, limit: int = 100) -> list[dict]:
        q = select(lessons.c.id, lessons.c.session_id, lessons.c.statement, lessons.c.why_learned,
                   lessons.c.entities, lessons.c.member_entry_ids, lessons.c.data_item_id, lessons.c.created_at
                   ).where(lessons.c.dataset_id == dataset_id)
        if session_id is not None:
            q = q.where(lessons.c.session_id == session_id)
        return [dict(r) for r in self.conn.execute(q.order_by(lessons.c.created_at, lessons.c.id).limit(limit)).mappings()]

    def decisions_of(self, dataset_id: uuid.UUID, session_id: str | None = None, limit: int = 100) -> list[dict]:
        c = lesson_decisions.c
        q = select(c.working_statement, c.member_entry_ids, c.accepted, c.reason, c.statement, c.lesson_id,
                   c.error, c.improve_run_id, c.session_id, c.created_at).where(c.dataset_id == dataset_id)
        if session_id is not None:
            q = q.where(c.session_id == session_id)
        return [dict(r) for r in self.conn.execute(q.order_by(c.created_at.desc()).limit(limit)).mappings()]

    def lessons_by_items(self, data_item_ids) -> dict[uuid.UUID, dict]:
        rows = self.conn.execute(select(lessons.c.id, lessons.c.session_id, lessons.c.member_entry_ids,
                                        lessons.c.data_item_id).where(lessons.c.data_item_id.in_(list(data_item_ids))))
        return {r.data_item_id: dict(r._mapping) for r in rows}

    def lesson_statements(self, dataset_id: uuid.UUID) -> list[str]:
        """Learnings of the truth subspace: statements of the dataset's published lessons."""
        return list(self.conn.execute(text(
            "SELECT l.statement FROM lessons l JOIN data_items i ON i.id = l.data_item_id"
            " WHERE l.dataset_id = :d AND 'session_learnings' = ANY(i.node_sets) ORDER BY l.id"),
            {"d": dataset_id}).scalars().all())

    # ------------------------------------------------------------ user preferences

    def add_preferences(self, rows: Sequence[dict]) -> list[dict]:
        """Insert once per id; the rows that were new."""
        added = []
        for r in rows:
            if self.conn.execute(insert(user_preferences).values(**r).on_conflict_do_nothing()
                                 .returning(user_preferences.c.id)).first() is not None:
                added.append(r)
        return added

    def user_names(self, user_ids) -> dict[uuid.UUID, str]:
        rows = self.conn.execute(text("SELECT id, name FROM users WHERE id = ANY(:ids)"), {"ids": list(user_ids)})
        return {r[0]: r[1] for r in rows}

    # ------------------------------------------------------------ global context

    def overview(self, dataset_id: uuid.UUID, top: int) -> tuple[list[dict], list[dict]]:
        """The most connected entities (by fact edges) and the facts among their neighbourhood."""
        entities = [dict(r) for r in self.conn.execute(text(
            "SELECT e.id, e.display_name AS name, e.description, t.name AS type, count(*) AS degree"
            " FROM entities e JOIN edges g ON (g.source_id = e.id OR g.target_id = e.id)"
            f" AND {facts_only()} AND NOT g.superseded"
            " LEFT JOIN entity_types t ON t.id = e.type_id"
            " WHERE e.dataset_id = :d GROUP BY e.id, e.display_name, e.description, t.name"
            " ORDER BY count(*) DESC, e.display_name LIMIT :k"), {"d": dataset_id, "k": top}).mappings()]
        facts = [dict(r) for r in self.conn.execute(text(
            "SELECT s.display_name AS source, g.relationship, t.display_name AS target FROM edges g"
            " JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
            f" WHERE g.dataset_id = :d AND g.source_id = ANY(:ids) AND {facts_only()}"
            " AND NOT g.superseded ORDER BY 1, 2, 3"), {"d": dataset_id, "ids": [e["id"] for e in entities]}).mappings()]
        return entities, facts

    def overview_documents(self, dataset_id: uuid.UUID) -> list[dict]:
        return [dict(r) for r in self.conn.execute(text(
            "SELECT id, content FROM data_items WHERE dataset_id = :d AND 'global_context' = ANY(node_sets)"
            " ORDER BY created_at DESC"), {"d": dataset_id}).mappings()]

    # ------------------------------------------------------------ truth basis

    def bases(self, dataset_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Basis]:
        rows = self.conn.execute(text(
            "SELECT b.dataset_id, b.epoch, b.signature, c.slot, c.centroid, c.members FROM truth_bases b"
            " LEFT JOIN truth_centroids c ON c.dataset_id = b.dataset_id WHERE b.dataset_id = ANY(:ds)"
            " ORDER BY b.dataset_id, c.slot"), {"ds": list(dataset_ids)}).mappings()
        out: dict[uuid.UUID, Basis] = {}
        for r in rows:
            basis = out.setdefault(r["dataset_id"], Basis(r["epoch"], r["signature"]))
            if r["centroid"] is not None:
                basis.centroids.append([float(x) for x in r["centroid"]])
                basis.counts.append(int(r["members"]))
        return out

    def write_basis(self, dataset_id: uuid.UUID, basis: Basis, learnings: int) -> None:
        """Centroids and the live epoch/signature: written (and committed) before any chunk stamp."""
        self.conn.execute(insert(truth_bases).values(
            dataset_id=dataset_id, epoch=basis.epoch, signature=basis.signature, learnings=learnings,
        ).on_conflict_do_update(index_elements=["dataset_id"], set_={
            "epoch": basis.epoch, "signature": basis.signature, "learnings": learnings, "built_at": text("now()")}))
        self.conn.execute(truth_centroids.delete().where(truth_centroids.c.dataset_id == dataset_id))
        if basis.centroids:
            self.conn.execute(insert(truth_centroids), [
                {"dataset_id": dataset_id, "slot": i, "centroid": c, "members": n}
                for i, (c, n) in enumerate(zip(basis.centroids, basis.counts))])

    def unstamped(self, dataset_id: uuid.UUID, basis: Basis) -> int:
        """Chunks whose coordinates are not those of the live basis (epoch AND signature)."""
        return int(self.conn.execute(text(
            "SELECT count(*) FROM chunks WHERE dataset_id = :d AND embedding IS NOT NULL"
            " AND (truth_epoch IS DISTINCT FROM :e OR truth_signature IS DISTINCT FROM :s)"),
            {"d": dataset_id, "e": basis.epoch, "s": basis.signature}).scalar_one())

    def stamp_chunks(self, dataset_id: uuid.UUID, basis: Basis, limit: int = 5000) -> int:
        """Coordinates (cosine to each centroid, zero-padded to K) for up to `limit` chunks not yet
        stamped with this basis; computed in Postgres from the stored embeddings."""
        cosines = [f"1 - (c.embedding <=> CAST(:c{i} AS vector))" for i in range(len(basis.centroids))]
        coords = ", ".join(cosines + ["0"] * (K - len(cosines)))
        params = {f"c{i}": vector_literal(c) for i, c in enumerate(basis.centroids)}
        return self.conn.execute(text(
            "WITH todo AS (SELECT id FROM chunks WHERE dataset_id = :d AND embedding IS NOT NULL"
            " AND (truth_epoch IS DISTINCT FROM :e OR truth_signature IS DISTINCT FROM :s)"
            " ORDER BY id LIMIT :k FOR UPDATE SKIP LOCKED)"
            f" UPDATE chunks c SET truth_alignment = ARRAY[{coords}]::double precision[],"
            " truth_epoch = :e, truth_signature = :s FROM todo WHERE c.id = todo.id"),
            {"d": dataset_id, "e": basis.epoch, "s": basis.signature, "k": limit, **params}).rowcount

    def truth_due(self, dataset_ids: Sequence[uuid.UUID] | None = None, limit: int = 200) -> list[uuid.UUID]:
        """Datasets whose lessons differ from their live basis, or with chunks it has not stamped
        (the beat task's debounce: nothing changed → nothing to build)."""
        rows = self.conn.execute(text(
            "WITH learned AS (SELECT l.dataset_id, count(*) AS n, max(l.created_at) AS newest FROM lessons l"
            "   JOIN data_items i ON i.id = l.data_item_id WHERE 'session_learnings' = ANY(i.node_sets)"
            "   GROUP BY l.dataset_id)"
            " SELECT coalesce(b.dataset_id, x.dataset_id) FROM truth_bases b FULL JOIN learned x"
            "   ON x.dataset_id = b.dataset_id"
            " WHERE b.dataset_id IS NULL OR b.learnings <> coalesce(x.n, 0) OR b.built_at < x.newest"
            "   OR (b.learnings > 0 AND EXISTS (SELECT 1 FROM chunks c WHERE c.dataset_id = b.dataset_id"
            "     AND c.embedding IS NOT NULL AND (c.truth_epoch IS DISTINCT FROM b.epoch"
            "     OR c.truth_signature IS DISTINCT FROM b.signature)))"
            " ORDER BY 1 LIMIT :k"), {"k": limit}).scalars().all()
        return [r for r in rows if dataset_ids is None or r in set(dataset_ids)]
