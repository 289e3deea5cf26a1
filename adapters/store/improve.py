"""Improve bookkeeping: per-session state, fences, claims; reads of improve runs by dataset or claim."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Connection, func, select, text, update
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import (
    dataset_improve_state,
    improve_claims,
    pipeline_runs,
    session_improve_state,
)
from engram.pipelines.improve.claiming import FencedOut, fence_scopes  # noqa: F401 - re-exported

IMPROVE = "improve"  # the improve flow's runs in pipeline_runs (pipelines/improve/flow.py IMPROVE.name)


def _row(result) -> dict | None:
    row = result.mappings().first()
    return dict(row) if row else None


class ImproveRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    # ------------------------------------------------------------ fencing

    def fence_floor(self, scopes: Sequence[str]) -> int:
        return int(self.conn.execute(
            text("SELECT coalesce(max(fence), 0) FROM improve_fences WHERE scope = ANY(:s)"), {"s": list(scopes)}
        ).scalar_one())

    def check_fence(self, scopes: Sequence[str], fence: int) -> None:
        """Raise FencedOut unless `fence` is the highest seen for every scope, recording it.

        Run first in the transaction of every improve write: the row locks it takes also
        serialise writers of one scope until commit.
        """
        written = self.conn.execute(
            text(
                "INSERT INTO improve_fences (scope, fence) SELECT unnest(CAST(:s AS text[])), :f"
                " ON CONFLICT (scope) DO UPDATE SET fence = EXCLUDED.fence, updated_at = now()"
                " WHERE improve_fences.fence <= EXCLUDED.fence RETURNING scope"
            ),
            {"s": sorted(set(scopes)), "f": fence},
        ).scalars().all()
        if len(written) != len(set(scopes)):
            stale = sorted(set(scopes) - set(written))
            raise FencedOut(f"fencing number {fence} is stale for {', '.join(stale)}: the claim was taken over")

    # ------------------------------------------------------------ session state

    def bump_session(self, dataset_id: uuid.UUID, session_id: str, user_id: uuid.UUID | None) -> dict:
        """One more stored entry for the session's debounce counter; returns the state."""
        stmt = insert(session_improve_state).values(
            dataset_id=dataset_id, session_id=session_id, user_id=user_id, entries_since_improve=1)
        return _row(self.conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["dataset_id", "session_id"],
                set_={"entries_since_improve": session_improve_state.c.entries_since_improve + 1,
                      "updated_at": func.now()},
            ).returning(*session_improve_state.c, func.now().label("now"))
        ))

    def lock_session(self, dataset_id: uuid.UUID, session_id: str) -> dict | None:
        return _row(self.conn.execute(
            select(session_improve_state, func.now().label("now")).where(
                session_improve_state.c.dataset_id == dataset_id, session_improve_state.c.session_id == session_id,
            ).with_for_update()
        ))

    def ensure_sessions(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> None:
        if session_ids:
            self.conn.execute(insert(session_improve_state).values(
                [{"dataset_id": dataset_id, "session_id": s} for s in session_ids]).on_conflict_do_nothing())
        self.conn.execute(insert(dataset_improve_state).values(dataset_id=dataset_id).on_conflict_do_nothing())

    def mark_improving(self, dataset_id: uuid.UUID, session_ids: Sequence[str], auto: bool = False) -> None:
        """An improve starts (or is requested): the debounce counts from here."""
        values = {"entries_since_improve": 0, "last_improve_at": func.now(), "updated_at": func.now()}
        if auto:
            values["auto_requests"] = session_improve_state.c.auto_requests + 1
            values["declined_reason"] = None
        self._sessions(dataset_id, session_ids, values)
        self.conn.execute(update(dataset_improve_state).where(dataset_improve_state.c.dataset_id == dataset_id)
                          .values(last_improve_at=func.now(), updated_at=func.now()))

    def record_decline(self, dataset_id: uuid.UUID, session_id: str, reason: str) -> None:
        self.ensure_sessions(dataset_id, [session_id])
        self._sessions(dataset_id, [session_id], {"declined_reason": reason, "declined_at": func.now()})

    def request_rerun(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> None:
        self.ensure_sessions(dataset_id, session_ids)
        if session_ids:
            self._sessions(dataset_id, session_ids, {"rerun_requested_at": func.now()})
        else:
            self.conn.execute(update(dataset_improve_state).where(dataset_improve_state.c.dataset_id == dataset_id)
                              .values(rerun_requested_at=func.now()))

    def consume_reruns(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> None:
        self._sessions(dataset_id, session_ids, {"rerun_requested_at": None})
        self.conn.execute(update(dataset_improve_state).where(dataset_improve_state.c.dataset_id == dataset_id)
                          .values(rerun_requested_at=None))

    def advance_watermark(self, dataset_id: uuid.UUID, session_id: str, seq: int) -> None:
        self.conn.execute(
            update(session_improve_state)
            .where(session_improve_state.c.dataset_id == dataset_id, session_improve_state.c.session_id == session_id)
            .values(watermark_seq=func.greatest(session_improve_state.c.watermark_seq, seq), updated_at=func.now())
        )

    def _sessions(self, dataset_id: uuid.UUID, session_ids: Sequence[str], values: dict) -> None:
        if session_ids:
            self.conn.execute(
                update(session_improve_state)
                .where(session_improve_state.c.dataset_id == dataset_id,
                       session_improve_state.c.session_id.in_(list(session_ids)))
                .values(**values)
            )

    def sessions(self, dataset_id: uuid.UUID, session_ids: Sequence[str] | None = None) -> list[dict]:
        """The dataset's sessions (with entries or improve state): counts, pending work, state."""
        rows = self.conn.execute(
            text(
                "WITH st AS (SELECT * FROM session_improve_state WHERE dataset_id = :d"
                "   AND (CAST(:all AS boolean) OR session_id = ANY(:ss))),"
                " agg AS (SELECT e.session_id, count(*) AS entries, max(e.seq) AS max_seq,"
                "   count(*) FILTER (WHERE e.seq > coalesce(st.watermark_seq, 0)) AS pending_entries,"
                "   count(*) FILTER (WHERE e.helpful_count <> e.feedback_applied_helpful"
                "     OR e.harmful_count <> e.feedback_applied_harmful) AS pending_feedback"
                "   FROM session_entries e LEFT JOIN st ON st.session_id = e.session_id"
                "   WHERE e.dataset_id = :d AND (CAST(:all AS boolean) OR e.session_id = ANY(:ss))"
                "   GROUP BY e.session_id)"
                " SELECT coalesce(a.session_id, st.session_id) AS session_id, st.user_id,"
                " coalesce(st.watermark_seq, 0) AS watermark_seq,"
                " coalesce(st.entries_since_improve, 0) AS entries_since_improve, st.last_improve_at,"
                " coalesce(st.auto_requests, 0) AS auto_requests, st.rerun_requested_at, st.declined_reason,"
                " st.declined_at, coalesce(a.entries, 0) AS entries, coalesce(a.max_seq, 0) AS max_seq,"
                " coalesce(a.pending_entries, 0) AS pending_entries,"
                " coalesce(a.pending_feedback, 0) AS pending_feedback"
                " FROM agg a FULL JOIN st ON st.session_id = a.session_id ORDER BY 1"
            ),
            {"d": dataset_id, "all": session_ids is None, "ss": list(session_ids or [])},
        ).mappings()
        return [dict(r) for r in rows]

    def dataset_state(self, dataset_id: uuid.UUID) -> dict | None:
        return _row(self.conn.execute(
            select(dataset_improve_state).where(dataset_improve_state.c.dataset_id == dataset_id)))

    def set_triplet_watermark(self, dataset_id: uuid.UUID, at) -> None:
        self.conn.execute(update(dataset_improve_state).where(dataset_improve_state.c.dataset_id == dataset_id)
                          .values(triplet_watermark=at, updated_at=func.now()))

    # ------------------------------------------------------------ beat sweeps

    def quiet_sessions(self, older_than_seconds: float, limit: int = 500) -> list[dict]:
        """Sessions with entries (or feedback, or agent traces) pending for longer than T and no
        claim held.

        Entries stored without a debounce (e.g. by recall) count too: no state row = nothing done;
        so do agent traces, which request no improve themselves.
        """
        rows = self.conn.execute(
            text(
                "WITH pending AS ("
                " SELECT e.dataset_id, e.session_id, e.user_id FROM session_entries e"
                " LEFT JOIN session_improve_state s ON s.dataset_id = e.dataset_id AND s.session_id = e.session_id"
                " WHERE (e.seq > coalesce(s.watermark_seq, 0) AND e.created_at <= now() - make_interval(secs => :t))"
                "   OR ((e.helpful_count <> e.feedback_applied_helpful OR e.harmful_count <> e.feedback_applied_harmful)"
                "   AND e.feedback_at <= now() - make_interval(secs => :t))"
                " UNION ALL"
                " SELECT t.dataset_id, t.session_id, t.user_id FROM agent_traces t"
                " LEFT JOIN session_improve_state s ON s.dataset_id = t.dataset_id AND s.session_id = t.session_id"
                " WHERE t.session_id IS NOT NULL AND t.user_id IS NOT NULL"
                "   AND t.seq > least(coalesce(s.trace_watermark_seq, 0), coalesce(s.context_watermark_seq, 0))"
                "   AND t.created_at <= now() - make_interval(secs => :t))"
                " SELECT p.dataset_id, p.session_id, CAST(min(CAST(p.user_id AS text)) AS uuid) AS user_id"
                " FROM pending p"
                " LEFT JOIN session_improve_state s ON s.dataset_id = p.dataset_id AND s.session_id = p.session_id"
                # At most one automatic attempt per T: a run that keeps failing is not hammered.
                " WHERE (s.last_improve_at IS NULL OR s.last_improve_at <= now() - make_interval(secs => :t))"
                " AND NOT EXISTS (SELECT 1 FROM improve_claims c WHERE c.dataset_id = p.dataset_id"
                "   AND c.status = 'held' AND p.session_id = ANY(c.session_ids))"
                " GROUP BY p.dataset_id, p.session_id ORDER BY p.dataset_id, p.session_id LIMIT :k"
            ),
            {"t": float(older_than_seconds), "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def user_names(self, user_ids) -> dict:
        if not user_ids:
            return {}
        rows = self.conn.execute(text("SELECT id, name FROM users WHERE id = ANY(CAST(:u AS uuid[]))"),
                                 {"u": list(user_ids)}).all()
        return {r[0]: r[1] for r in rows}

    def rerun_requests(self, limit: int = 500) -> list[dict]:
        """Leftover rerun requests: (dataset, session or None)."""
        rows = self.conn.execute(
            text(
                "SELECT dataset_id, session_id FROM session_improve_state WHERE rerun_requested_at IS NOT NULL"
                " UNION ALL SELECT dataset_id, NULL FROM dataset_improve_state WHERE rerun_requested_at IS NOT NULL"
                " ORDER BY 1, 2 LIMIT :k"
            ),
            {"k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------ claims

    def create_claim(self, claim_id: uuid.UUID, dataset_id: uuid.UUID, session_ids: Sequence[str], fence: int,
                     keys: Sequence[str], value: str, trigger: str) -> None:
        self.conn.execute(insert(improve_claims).values(
            id=claim_id, dataset_id=dataset_id, session_ids=list(session_ids), fence=fence, claim_keys=list(keys),
            claim_value=value, trigger=trigger, status="held", claimed_at=func.clock_timestamp()))

    def claim(self, claim_id: uuid.UUID, lock: bool = False) -> dict | None:
        query = select(improve_claims).where(improve_claims.c.id == claim_id)
        return _row(self.conn.execute(query.with_for_update() if lock else query))

    def close_claim(self, claim_id: uuid.UUID, status: str, note: str | None = None) -> None:
        values = {"status": status, "note": note}
        values["released_at" if status == "released" else "lost_at"] = func.clock_timestamp()
        self.conn.execute(update(improve_claims).where(improve_claims.c.id == claim_id,
                                                       improve_claims.c.status == "held").values(**values))

    def renewed(self, claim_id: uuid.UUID) -> None:
        self.conn.execute(update(improve_claims).where(improve_claims.c.id == claim_id, improve_claims.c.status == "held")
                          .values(renewed_at=func.clock_timestamp()))

    def count_pass(self, claim_id: uuid.UUID) -> int:
        return int(self.conn.execute(
            update(improve_claims).where(improve_claims.c.id == claim_id)
            .values(passes=improve_claims.c.passes + 1).returning(improve_claims.c.passes)
        ).scalar_one())

    def stale_claims(self, lease_seconds: float) -> list[dict]:
        """Held claims whose holder has not renewed them for a whole lease."""
        return [dict(r) for r in self.conn.execute(
            select(improve_claims).where(
                improve_claims.c.status == "held",
                improve_claims.c.renewed_at < func.now() - func.make_interval(0, 0, 0, 0, 0, 0, lease_seconds),
            ).with_for_update(skip_locked=True)
        ).mappings()]

    # ------------------------------------------------------------ runs (read)
    # Improve runs are rows of pipeline_runs (pipeline 'improve'), their stages rows of
    # stage_runs, written by adapters/store/runs.py like every flow's.

    def runs_of(self, dataset_id: uuid.UUID, session_id: str | None = None, limit: int = 100) -> list[dict]:
        query = select(pipeline_runs).where(pipeline_runs.c.dataset_id == dataset_id,
                                            pipeline_runs.c.pipeline == IMPROVE)
        if session_id is not None:
            query = query.where(pipeline_runs.c.session_ids.any(session_id))
        return [dict(r) for r in self.conn.execute(
            query.order_by(pipeline_runs.c.created_at.desc()).limit(limit)).mappings()]

    def open_runs_of_claim(self, claim_id: uuid.UUID) -> list[dict]:
        return [dict(r) for r in self.conn.execute(select(pipeline_runs).where(
            pipeline_runs.c.claim_id == claim_id, pipeline_runs.c.status == "running")).mappings()]

    # ------------------------------------------------------------ what the stages write

    def weights(self, table: str, dataset_id: uuid.UUID, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, float]:
        """Current feedback weights of chunks or edges of the dataset, locked for update."""
        assert table in ("chunks", "edges")
        rows = self.conn.execute(
            text(f"SELECT id, feedback_weight FROM {table} WHERE dataset_id = :d AND id = ANY(:ids)"
                 " ORDER BY id FOR UPDATE"),
            {"d": dataset_id, "ids": list(ids)},
        )
        return {r[0]: float(r[1]) for r in rows}

    def set_weights(self, table: str, weights: dict[uuid.UUID, float]) -> None:
        assert table in ("chunks", "edges")
        for key, value in sorted(weights.items()):
            self.conn.execute(text(f"UPDATE {table} SET feedback_weight = :w WHERE id = :i"), {"w": value, "i": key})

    def changed_edges(self, dataset_id: uuid.UUID, limit: int | None = None) -> list[dict]:
        """Entity-to-entity edges never enriched, or updated since they were."""
        rows = self.conn.execute(
            text(
                "SELECT g.id, g.relationship, g.updated_at, s.display_name AS source, t.display_name AS target"
                " FROM edges g JOIN entities s ON s.id = g.source_id JOIN entities t ON t.id = g.target_id"
                " LEFT JOIN triplet_embeddings x ON x.edge_id = g.id"
                " WHERE g.dataset_id = :d AND (x.edge_id IS NULL OR g.updated_at > x.updated_at)"
                " ORDER BY g.updated_at, g.id LIMIT :k"
            ),
            {"d": dataset_id, "k": limit},
        ).mappings()
        return [dict(r) for r in rows]

    def upsert_triplets(self, dataset_id: uuid.UUID, rows: Sequence[dict]) -> None:
        for r in rows:
            self.conn.execute(
                text(
                    "INSERT INTO triplet_embeddings (edge_id, dataset_id, text, embedding, updated_at)"
                    " VALUES (:e, :d, :t, CAST(:v AS vector), :u) ON CONFLICT (edge_id) DO UPDATE"
                    " SET text = EXCLUDED.text, embedding = EXCLUDED.embedding, updated_at = EXCLUDED.updated_at"
                ),
                {"e": r["id"], "d": dataset_id, "t": r["text"], "v": str(list(r["vector"])), "u": r["updated_at"]},
            )
