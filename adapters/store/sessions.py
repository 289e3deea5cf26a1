"""Session memory: question / answer / context entries per (dataset, session, user)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, func, select, update
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import session_entries


class SessionRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    def add_entry(
        self,
        *,
        dataset_id: uuid.UUID,
        session_id: str,
        user_id: uuid.UUID,
        question: str,
        answer: str = "",
        context: str = "",
        source_chunk_ids: Sequence[uuid.UUID] = (),
        source_edge_ids: Sequence[uuid.UUID] = (),
        confidence: float = 1.0,
        entry_id: uuid.UUID | None = None,
        occurred_at: datetime | None = None,
        dates: Sequence[dict] | None = None,
    ) -> uuid.UUID:
        """Store one entry. A caller that may run twice (a redelivered task) passes a
        deterministic entry_id, and the second insert is a no-op."""
        entry_id = entry_id or uuid.uuid4()
        self.conn.execute(
            insert(session_entries)
            .values(
                id=entry_id,
                dataset_id=dataset_id,
                session_id=session_id,
                user_id=user_id,
                question=question,
                answer=answer,
                context=context,
                source_chunk_ids=list(source_chunk_ids),
                source_edge_ids=list(source_edge_ids),
                confidence=confidence,
                occurred_at=occurred_at,
                dates=list(dates) if dates is not None else None,
            )
            .on_conflict_do_nothing(index_elements=[session_entries.c.id])
        )
        return entry_id

    def entries(
        self,
        dataset_ids: Sequence[uuid.UUID],
        session_id: str,
        limit: int = 200,
        user_id: uuid.UUID | None = None,
    ) -> list[dict]:
        """The session's most recent entries in these datasets (of one user if given), newest first."""
        query = (
            select(session_entries)
            .where(session_entries.c.dataset_id.in_(list(dataset_ids)), session_entries.c.session_id == session_id)
            .order_by(session_entries.c.seq.desc())
            .limit(limit)
        )
        if user_id is not None:
            query = query.where(session_entries.c.user_id == user_id)
        return [dict(r) for r in self.conn.execute(query).mappings()]

    # ------------------------------------------------------------ improve (issue 5)

    def entry(self, entry_id: uuid.UUID, *, lock: bool = False) -> dict | None:
        query = select(session_entries).where(session_entries.c.id == entry_id)
        if lock:
            query = query.with_for_update()
        row = self.conn.execute(query).mappings().first()
        return dict(row) if row else None

    def window(self, dataset_id: uuid.UUID, session_id: str, after_seq: int, upto_seq: int | None = None) -> list[dict]:
        """The session's entries with after_seq < seq <= upto_seq, in arrival order."""
        c = session_entries.c
        query = select(session_entries).where(c.dataset_id == dataset_id, c.session_id == session_id,
                                              c.seq > after_seq)
        if upto_seq is not None:
            query = query.where(c.seq <= upto_seq)
        return [dict(r) for r in self.conn.execute(query.order_by(c.seq)).mappings()]

    def max_seq(self, dataset_id: uuid.UUID, session_id: str) -> int:
        c = session_entries.c
        return int(self.conn.execute(
            select(func.coalesce(func.max(c.seq), 0)).where(c.dataset_id == dataset_id, c.session_id == session_id)
        ).scalar_one())

    def record_feedback(self, entry_id: uuid.UUID, helpful: bool, score: float | None) -> dict:
        """Count one helpful/harmful verdict; a score (0..1) becomes the entry's confidence."""
        c = session_entries.c
        values: dict = {"feedback_at": func.now()}
        if helpful:
            values["helpful_count"] = c.helpful_count + 1
        else:
            values["harmful_count"] = c.harmful_count + 1
        if score is not None:
            values["confidence"] = score
        row = self.conn.execute(
            update(session_entries).where(c.id == entry_id).values(**values).returning(*session_entries.c)
        ).mappings().one()
        return dict(row)

    def unapplied_feedback(self, dataset_id: uuid.UUID, session_ids: Sequence[str], lock: bool = False) -> list[dict]:
        """Entries whose helpful/harmful counts moved since feedback_weights last applied them."""
        c = session_entries.c
        query = select(session_entries).where(
            c.dataset_id == dataset_id, c.session_id.in_(list(session_ids)),
            (c.helpful_count != c.feedback_applied_helpful) | (c.harmful_count != c.feedback_applied_harmful),
        ).order_by(c.seq)
        return [dict(r) for r in self.conn.execute(query.with_for_update() if lock else query).mappings()]

    def mark_feedback_applied(self, entries: Sequence[dict]) -> None:
        for e in entries:
            self.conn.execute(update(session_entries).where(session_entries.c.id == e["id"]).values(
                feedback_applied_helpful=e["helpful_count"], feedback_applied_harmful=e["harmful_count"]))
