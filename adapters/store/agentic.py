"""Skills, stored tool specs, skill runs, improvement proposals and agent traces (SPEC 8, 8b).

Every method takes the dataset id the caller was authorised on; ids found in payloads (a run
id, a proposal id) are looked up within that dataset only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, select, text, update
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import (agent_tools, agent_traces, lessons, session_improve_state, skill_proposals, skill_runs, skills,
                                   users)
from engram.pipelines import ids
from engram.pipelines.agentic.skills import Skill, SkillRun
from engram.pipelines.agentic.tools import ToolSpec


class AgenticRepository:
    def __init__(self, conn: Connection):
        self.conn = conn

    # --- skills -------------------------------------------------------------------------------
    def put_skill(self, dataset_id: uuid.UUID, skill: Skill) -> uuid.UUID:
        """Create or replace a skill by name; a changed procedure keeps the old one in history."""
        skill_id = ids.skill_id(dataset_id, skill.name)
        old = self.conn.execute(select(skills.c.procedure, skills.c.history)
                                .where(skills.c.id == skill_id).with_for_update()).first()
        history = list(old.history) if old else []
        if old is not None and old.procedure != skill.procedure:
            history.append(old.procedure)
        stmt = insert(skills).values(id=skill_id, dataset_id=dataset_id, name=skill.name,
                                     description=skill.description, procedure=skill.procedure,
                                     tools=list(skill.tools), history=history)
        self.conn.execute(stmt.on_conflict_do_update(index_elements=[skills.c.id], set_={
            "description": stmt.excluded.description, "procedure": stmt.excluded.procedure,
            "tools": stmt.excluded.tools, "history": stmt.excluded.history, "updated_at": func.now()}))
        return skill_id

    def skills(self, dataset_id: uuid.UUID) -> list[Skill]:
        rows = self.conn.execute(select(skills).where(skills.c.dataset_id == dataset_id).order_by(skills.c.name))
        return [Skill(r.name, r.description, r.procedure, tuple(r.tools)) for r in rows]

    def skill_history(self, dataset_id: uuid.UUID, name: str) -> list[str]:
        row = self.conn.execute(select(skills.c.history).where(skills.c.id == ids.skill_id(dataset_id, name))).first()
        return list(row.history) if row else []

    # --- stored tool specs -------------------------------------------------------------------
    def put_tool(self, dataset_id: uuid.UUID, spec: ToolSpec) -> None:
        stmt = insert(agent_tools).values(dataset_id=dataset_id, name=spec.name, description=spec.description,
                                          handler=spec.handler, arguments=dict(spec.arguments),
                                          required=list(spec.required), permission=spec.permission)
        self.conn.execute(stmt.on_conflict_do_update(
            index_elements=[agent_tools.c.dataset_id, agent_tools.c.name],
            set_={c: stmt.excluded[c] for c in ("description", "handler", "arguments", "required", "permission")}
            | {"updated_at": func.now()}))

    def tools(self, dataset_id: uuid.UUID) -> list[ToolSpec]:
        rows = self.conn.execute(select(agent_tools).where(agent_tools.c.dataset_id == dataset_id)
                                 .order_by(agent_tools.c.name))
        return [ToolSpec(r.name, r.description, r.handler, dict(r.arguments), tuple(r.required), r.permission)
                for r in rows]

    # --- runs ---------------------------------------------------------------------------------
    def add_run(self, dataset_id: uuid.UUID, user_id: uuid.UUID, run: SkillRun, run_id: uuid.UUID) -> uuid.UUID:
        self.conn.execute(insert(skill_runs).values(
            id=run_id, dataset_id=dataset_id, skill_id=ids.skill_id(dataset_id, run.skill), user_id=user_id,
            task=run.task, result_summary=run.result_summary, score=run.score, tool_trace=run.tool_trace,
            error=run.error, started_at=run.started_at, finished_at=run.finished_at,
        ).on_conflict_do_nothing(index_elements=[skill_runs.c.id]))
        return run_id

    def score_run(self, dataset_id: uuid.UUID, run_id: uuid.UUID, score: float) -> bool:
        done = self.conn.execute(update(skill_runs).where(skill_runs.c.id == run_id,
                                                          skill_runs.c.dataset_id == dataset_id).values(score=score))
        return done.rowcount == 1

    def runs(self, dataset_id: uuid.UUID, skill: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        query = (select(skill_runs, skills.c.name.label("skill")).join(skills, skills.c.id == skill_runs.c.skill_id)
                 .where(skill_runs.c.dataset_id == dataset_id)
                 .order_by(skill_runs.c.finished_at.desc().nulls_last()).limit(limit))
        if skill is not None:
            query = query.where(skills.c.name == skill)
        return [dict(r._mapping) for r in self.conn.execute(query)]

    # --- proposals ----------------------------------------------------------------------------
    def add_proposal(self, dataset_id: uuid.UUID, skill: Skill, new_procedure: str, rationale: str,
                     confidence: float, run_ids: Sequence[uuid.UUID]) -> uuid.UUID:
        proposal_id = uuid.uuid4()
        self.conn.execute(insert(skill_proposals).values(
            id=proposal_id, dataset_id=dataset_id, skill_id=ids.skill_id(dataset_id, skill.name), status="proposed",
            old_procedure=skill.procedure, new_procedure=new_procedure, rationale=rationale,
            confidence=confidence, run_ids=[str(r) for r in run_ids]))
        return proposal_id

    def proposal(self, dataset_id: uuid.UUID, proposal_id: uuid.UUID) -> dict[str, Any] | None:
        row = self.conn.execute(
            select(skill_proposals, skills.c.name.label("skill"))
            .join(skills, skills.c.id == skill_proposals.c.skill_id)
            .where(skill_proposals.c.id == proposal_id, skill_proposals.c.dataset_id == dataset_id)
            .with_for_update(of=skill_proposals)).first()
        return dict(row._mapping) if row else None

    def proposals(self, dataset_id: uuid.UUID, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            select(skill_proposals, skills.c.name.label("skill"))
            .join(skills, skills.c.id == skill_proposals.c.skill_id)
            .where(skill_proposals.c.dataset_id == dataset_id)
            .order_by(skill_proposals.c.created_at.desc()).limit(limit))
        return [dict(r._mapping) for r in rows]

    def mark_applied(self, dataset_id: uuid.UUID, proposal_id: uuid.UUID, skill: str) -> None:
        skill_id = ids.skill_id(dataset_id, skill)
        # Other open proposals for the skill were drafted against the old procedure.
        self.conn.execute(update(skill_proposals).where(
            skill_proposals.c.skill_id == skill_id, skill_proposals.c.status == "proposed",
            skill_proposals.c.id != proposal_id).values(status="superseded"))
        self.conn.execute(update(skill_proposals).where(skill_proposals.c.id == proposal_id)
                          .values(status="applied", applied_at=datetime.now(UTC)))

    # --- agent traces -------------------------------------------------------------------------
    def add_trace(self, trace_id: uuid.UUID, dataset_id: uuid.UUID, user_id: uuid.UUID, session_id: str | None,
                  function: str, inputs: str, result: str | None, error: str | None,
                  memory: str | None = None) -> bool:
        done = self.conn.execute(insert(agent_traces).values(
            id=trace_id, dataset_id=dataset_id, user_id=user_id, session_id=session_id, function=function,
            inputs=inputs, result=result, error=error, memory=memory,
        ).on_conflict_do_nothing(index_elements=[agent_traces.c.id]).returning(agent_traces.c.id)).first()
        return done is not None

    def last_traces(self, dataset_id: uuid.UUID, user_id: uuid.UUID, session_id: str | None,
                    limit: int) -> list[dict[str, Any]]:
        query = (select(agent_traces).where(agent_traces.c.dataset_id == dataset_id,
                                            agent_traces.c.user_id == user_id)
                 .order_by(agent_traces.c.created_at.desc()).limit(limit))
        if session_id is not None:
            query = query.where(agent_traces.c.session_id == session_id)
        return [dict(r._mapping) for r in self.conn.execute(query)]

    # --- traces as memory (improve: persist_agent_traces, extract_agent_context) --------------
    def trace_watermarks(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Per session: how far its traces became entries (`persist`) and were distilled (`context`)."""
        c = session_improve_state.c
        rows = self.conn.execute(select(c.session_id, c.trace_watermark_seq, c.context_watermark_seq).where(
            c.dataset_id == dataset_id, c.session_id.in_(list(session_ids)))).all()
        found = {r[0]: {"persist": int(r[1]), "context": int(r[2])} for r in rows}
        return {s: found.get(s, {"persist": 0, "context": 0}) for s in session_ids}

    def pending_traces(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Per session with traces: the top seq and how many traces each watermark has not passed."""
        if not session_ids:
            return {}
        rows = self.conn.execute(text(
            "SELECT t.session_id, max(t.seq) AS upto,"
            " count(*) FILTER (WHERE t.seq > coalesce(s.trace_watermark_seq, 0)) AS persist,"
            " count(*) FILTER (WHERE t.seq > coalesce(s.context_watermark_seq, 0)) AS context"
            " FROM agent_traces t LEFT JOIN session_improve_state s"
            "   ON s.dataset_id = t.dataset_id AND s.session_id = t.session_id"
            " WHERE t.dataset_id = :d AND t.session_id = ANY(:ss) GROUP BY t.session_id"),
            {"d": dataset_id, "ss": list(session_ids)}).mappings()
        return {r["session_id"]: {"upto": int(r["upto"]), "persist": int(r["persist"]), "context": int(r["context"])}
                for r in rows}

    def trace_window(self, dataset_id: uuid.UUID, session_id: str, after_seq: int, upto_seq: int,
                     errors_only: bool = False) -> list[dict[str, Any]]:
        """The session's traces with after_seq < seq <= upto_seq, in arrival order, with the caller's name."""
        c = agent_traces.c
        query = (select(agent_traces, users.c.name.label("user_name"))
                 .select_from(agent_traces.outerjoin(users, users.c.id == c.user_id))
                 .where(c.dataset_id == dataset_id, c.session_id == session_id, c.seq > after_seq, c.seq <= upto_seq)
                 .order_by(c.seq))
        if errors_only:
            query = query.where(c.error.isnot(None))
        return [dict(r._mapping) for r in self.conn.execute(query)]

    def advance_trace_watermarks(self, dataset_id: uuid.UUID, session_id: str, *, persist: int | None = None,
                                 context: int | None = None) -> None:
        c = session_improve_state.c
        values: dict[str, Any] = {"updated_at": func.now()}
        if persist is not None:
            values["trace_watermark_seq"] = func.greatest(c.trace_watermark_seq, persist)
        if context is not None:
            values["context_watermark_seq"] = func.greatest(c.context_watermark_seq, context)
        self.conn.execute(insert(session_improve_state).values(dataset_id=dataset_id, session_id=session_id)
                          .on_conflict_do_nothing())
        self.conn.execute(update(session_improve_state).where(c.dataset_id == dataset_id, c.session_id == session_id)
                          .values(**values))

    def lessons_not_of_run(self, lesson_ids: Sequence[uuid.UUID], run_id: uuid.UUID) -> set[uuid.UUID]:
        """Which of these lessons exist, learned by another run than `run_id`."""
        if not lesson_ids:
            return set()
        return set(self.conn.execute(select(lessons.c.id).where(
            lessons.c.id.in_(list(set(lesson_ids))),
            lessons.c.improve_run_id.is_distinct_from(run_id))).scalars().all())
