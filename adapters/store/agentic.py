"""Skills, stored tool specs, skill runs, improvement proposals and agent traces (SPEC 8, 8b).

Every method takes the dataset id the caller was authorised on; ids found in payloads (a run
id, a proposal id) are looked up within that dataset only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, select, update
from sqlalchemy.dialects.postgresql import insert

from engram.models.tables import agent_tools, agent_traces, skill_proposals, skill_runs, skills
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
                  function: str, inputs: str, result: str | None, error: str | None) -> bool:
        done = self.conn.execute(insert(agent_traces).values(
            id=trace_id, dataset_id=dataset_id, user_id=user_id, session_id=session_id, function=function,
            inputs=inputs, result=result, error=error).on_conflict_do_nothing(index_elements=[agent_traces.c.id]))
        return done.rowcount == 1

    def last_traces(self, dataset_id: uuid.UUID, user_id: uuid.UUID, session_id: str | None,
                    limit: int) -> list[dict[str, Any]]:
        query = (select(agent_traces).where(agent_traces.c.dataset_id == dataset_id,
                                            agent_traces.c.user_id == user_id)
                 .order_by(agent_traces.c.created_at.desc()).limit(limit))
        if session_id is not None:
            query = query.where(agent_traces.c.session_id == session_id)
        return [dict(r._mapping) for r in self.conn.execute(query)]
