"""Skills, stored tools, skill runs and proposals, agent memory and traces (SPEC 8, 8b).

Every task authorises the named dataset for the caller first (read for views and memory,
write for anything that changes a skill, a tool, a run score or stores a trace); ids in the
payload (run, proposal) are looked up inside that dataset only, so they grant nothing.
"""

from __future__ import annotations

import uuid

from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.store import Store
from engram.models.agentic import (AgentMemory, AgentMemoryRequest, AgentTraceRequest, ProposalApplied, RunScored,
                                   SkillApplyRequest, SkillDefineRequest, SkillFeedbackRequest, SkillImprovement,
                                   SkillImproveRequest, SkillListRequest, SkillsListed, SkillStored, ToolDefineRequest,
                                   ToolStored, TraceStored, refuse_import_paths)
from engram.pipelines import ids
from engram.pipelines.agentic.skills import Skill, SkillError, SkillRun, apply_proposal, improvement_candidates, render_runs
from engram.pipelines.agentic.tools import ToolSpec, host_tools, stronger
from engram.pipelines.errors import BadInput
from engram.prompts.agentic import DraftedProcedure, skill_improvement_prompt
from engram.settings import get_settings, load_configured
from engram.tasks.base import engram_task


def configured_tools():
    """(registry, host tool specs) from ENGRAM_AGENT_TOOLS; only these and the built-ins run."""
    paths = [p.strip() for p in get_settings().agent_tools.split(",") if p.strip()]
    return host_tools(paths, load_configured)


@engram_task("engram.skills.define", payload=SkillDefineRequest)
def define_skill(self, req: SkillDefineRequest) -> dict:
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        skill_id = uow.agentic.put_skill(dataset, Skill(req.name, req.description, req.procedure, tuple(req.tools)))
        history = uow.agentic.skill_history(dataset, req.name)
    return SkillStored(skill_id=skill_id, name=req.name, earlier_procedures=len(history)).model_dump(mode="json")


@engram_task("engram.skills.define_tool", payload=ToolDefineRequest)
def define_tool(self, req: ToolDefineRequest) -> dict:
    unknown = sorted(set(req.required) - set(req.arguments))
    if unknown:
        raise BadInput(f"required arguments {unknown} are not among the tool's arguments")
    registry, _ = configured_tools()
    floor = registry.minimum(req.handler)
    permission = req.permission or floor or "read"  # none declared: what the handler needs
    if floor is not None and stronger(permission, floor) != permission:
        raise BadInput(f"tool {req.name!r} declares permission {permission!r}, but its handler {req.handler!r} "
                       f"needs at least {floor!r}: declare {floor!r} or a stronger one")
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        uow.agentic.put_tool(dataset, ToolSpec(req.name, req.description, req.handler, req.arguments,
                                               tuple(req.required), permission))
    warning = refuse_import_paths(req.handler, {req.handler} if req.handler in registry else set())
    return ToolStored(name=req.name, permission=permission, runnable=warning is None,
                      warning=warning).model_dump(mode="json")


@engram_task("engram.skills.list", payload=SkillListRequest)
def list_skills(self, req: SkillListRequest) -> dict:
    registry, _ = configured_tools()
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        skills = [s for s in uow.agentic.skills(dataset) if req.skill in (None, s.name)]
        return SkillsListed(
            dataset=req.dataset,
            skills=[{"name": s.name, "description": s.description, "procedure": s.procedure,
                        "tools": list(s.tools), "earlier_procedures": uow.agentic.skill_history(dataset, s.name)}
                       for s in skills],
            # The permission a call needs: a spec stored weaker than its handler shows the handler's.
            tools=[{"name": t.name, "description": t.description, "handler": t.handler,
                       "permission": registry.effective(t).permission} for t in uow.agentic.tools(dataset)],
            runs=_jsonable(uow.agentic.runs(dataset, req.skill, req.limit)),
            proposals=_jsonable(p for p in uow.agentic.proposals(dataset, req.limit)
                                if req.skill in (None, p["skill"])),
        ).model_dump(mode="json")


@engram_task("engram.skills.feedback", payload=SkillFeedbackRequest)
def score_run(self, req: SkillFeedbackRequest) -> dict:
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        if not uow.agentic.score_run(dataset, req.run_id, req.score):
            raise BadInput(f"skill run {req.run_id} does not exist in dataset {req.dataset!r}")
    return RunScored(run_id=req.run_id, score=req.score).model_dump(mode="json")


@engram_task("engram.skills.improve", payload=SkillImproveRequest)
def improve_skill(self, req: SkillImproveRequest) -> dict:
    if not get_settings().agent_skill_improvement:
        return _improvement("disabled", reason="skill improvement is opt-in: set ENGRAM_AGENT_SKILL_IMPROVEMENT=true")
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        skill = _skill(uow, dataset, req.skill)
        rows = uow.agentic.runs(dataset, req.skill, 200)
    runs = improvement_candidates([_run(r) for r in rows])
    if not runs:
        return _improvement("nothing_to_improve", reason="no failed or low-scoring runs of this skill")
    gateway = gateway_from_settings(get_settings())
    if not gateway.generates:
        return _improvement("llm_required", reason="drafting a procedure needs an LLM (ENGRAM_LLM_MODEL)")
    draft = gateway.structured(skill_improvement_prompt(skill.name, skill.procedure, render_runs(runs)),
                               DraftedProcedure, subject=f"skill:{skill.name}")
    run_ids = [r.run_id for r in runs]
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        proposal_id = uow.agentic.add_proposal(dataset, skill, draft.proposed_procedure, draft.rationale,
                                               draft.confidence, run_ids)
    return _improvement("proposed", proposal_id=proposal_id, skill=skill.name, confidence=draft.confidence,
                        rationale=draft.rationale, runs=run_ids)


def _improvement(status: str, **fields) -> dict:
    """Only the fields of this case go out (a proposal has no reason, a refusal no proposal)."""
    return SkillImprovement(status=status, **fields).model_dump(mode="json", exclude_unset=True)


@engram_task("engram.skills.apply", payload=SkillApplyRequest)
def apply_skill_proposal(self, req: SkillApplyRequest) -> dict:
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        skill = _skill(uow, dataset, req.skill)
        proposal = uow.agentic.proposal(dataset, req.proposal_id)
        if proposal is None:
            raise BadInput(f"proposal {req.proposal_id} does not exist in dataset {req.dataset!r}")
        try:
            improved = apply_proposal(skill, proposal)
        except SkillError as exc:
            raise BadInput(str(exc)) from None
        uow.agentic.put_skill(dataset, improved)
        uow.agentic.mark_applied(dataset, req.proposal_id, skill.name)
        history = uow.agentic.skill_history(dataset, skill.name)
    return ProposalApplied(skill=skill.name, proposal_id=req.proposal_id,
                           earlier_procedures=len(history)).model_dump(mode="json")


@engram_task("engram.agent.memory", payload=AgentMemoryRequest)
def agent_memory(self, req: AgentMemoryRequest) -> dict:
    """Bounded memory for a decorated producer function: graph facts plus its last traces."""
    from engram.tasks.recall import context_items  # recall owns the lanes

    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "read")
        traces = uow.agentic.last_traces(dataset, ids.user_id(req.user), req.session_id, req.last_traces)
    lines = []
    if req.query.strip() and req.top_k:
        lines += [f"- {item.text}" for item in context_items(req.query, req.dataset, req.user, req.top_k)]
    for t in reversed(traces):
        outcome = f"error: {t['error']}" if t["error"] else f"returned: {t['result']}"
        lines.append(f"- earlier call {t['function']} with {t['inputs'][:500]} {outcome[:500]}")
    return AgentMemory(memory="\n".join(lines), facts=len(lines) - len(traces), traces=len(traces)).model_dump()


@engram_task("engram.agent.trace", payload=AgentTraceRequest)
def agent_trace(self, req: AgentTraceRequest) -> dict:
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(req.dataset, req.user, "write")
        user_id = uow.access.ensure_user(req.user)
        stored = uow.agentic.add_trace(req.trace_id, dataset, user_id, req.session_id, req.function,
                                       req.inputs, req.result, req.error, req.memory)
    return TraceStored(status="stored" if stored else "duplicate", trace_id=req.trace_id).model_dump(mode="json")


def _skill(uow, dataset: uuid.UUID, name: str) -> Skill:
    skill = next((s for s in uow.agentic.skills(dataset) if s.name == name), None)
    if skill is None:
        raise BadInput(f"skill {name!r} does not exist in this dataset")
    return skill


def _run(row: dict) -> SkillRun:
    run = SkillRun(row["skill"], row["task"], row["result_summary"], row["tool_trace"], row["error"], row["score"],
                   row["started_at"], row["finished_at"])
    run.run_id = row["id"]  # type: ignore[attr-defined]
    return run


def _jsonable(rows) -> list[dict]:
    out = []
    for row in rows:
        out.append({k: (str(v) if isinstance(v, uuid.UUID) else v.isoformat() if hasattr(v, "isoformat") else v)
                    for k, v in row.items()})
    return out
