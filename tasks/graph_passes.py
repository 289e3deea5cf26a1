"""Graph maintenance passes (SPEC 7) as stage tasks: contradiction check, temporal supersession.

In a cognify run they follow embed_and_load and look at the entities it touched; started on
their own (engram.maintenance.check_contradictions / engram.maintenance.supersede) they are a
one-stage "maintenance" run over the whole dataset. Either way they are optional stages: a
failure is recorded on the stage and the run still completes, because the ingested data they
examine is committed and valid. Both are idempotent: a second pass writes nothing new.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.store import Store
from engram.models.payloads import ContradictionCheckRequest, MaintenanceAccepted, SupersedeRequest
from engram.pipelines.maintenance.contradictions import (
    STRUCTURAL,
    ContradictionEdge,
    facts_text,
    judge,
    needs_check,
    select_facts,
)
from engram.pipelines.maintenance.supersession import (
    assertions_of,
    edge_changes,
    interval_changes,
    judge as judge_intervals,
    normalise_functional,
)
from engram.prompts.contradiction import ContradictionList, contradiction_prompt
from engram.settings import get_settings
from engram.tasks.base import StageSkipped, engram_task, execute_stage
from engram.tasks.cognify import StageRequest, start_runs

DATASET_SCOPE = "dataset"


def _stage_options() -> dict:
    return {"payload": StageRequest, "max_retries": get_settings().task_max_retries}


def _scope(uow, run_id: uuid.UUID) -> tuple[dict, list[uuid.UUID] | None]:
    """The run and its touched entities: embed_and_load's, or None for a whole-dataset pass."""
    run = uow.runs.get(run_id)
    if run["params"].get("scope") == DATASET_SCOPE:
        return run, None
    loaded = uow.runs.stage_output(run_id, "embed_and_load") or {}
    return run, [uuid.UUID(e) for e in loaded.get("touched_entities", [])]


# ------------------------------------------------------------------ contradiction check


@engram_task("engram.maintenance.contradiction_check", **_stage_options())
def contradiction_check(self, req: StageRequest) -> dict:
    settings = get_settings()

    def load(uow):
        run, touched = _scope(uow, req.run_id)
        rows = uow.maintenance.neighbourhood(run["dataset_id"], touched, exclude=STRUCTURAL, newest_first=True,
                                             limit=settings.contradiction_max_facts * 2)
        return {"dataset": run["dataset_id"], "touched": touched, "rows": rows}

    def compute(inputs):
        rows = inputs["rows"]
        names = {r["source_id"]: r["source_name"] for r in rows} | {r["target_id"]: r["target_name"] for r in rows}
        names = {k: v for k, v in names.items() if v}
        touched = inputs["touched"]
        if touched is None:
            touched = {r["source_id"] for r in rows} | {r["target_id"] for r in rows}
        facts = select_facts(rows, names, set(touched), settings.contradiction_max_facts)
        if not needs_check(facts):
            raise StageSkipped(f"{len(facts)} fact(s) in the touched neighbourhood: nothing to compare")
        answer = gateway_from_settings(settings).structured(contradiction_prompt(facts_text(facts)), ContradictionList)
        return {"facts": len(facts), "claimed": len(answer.contradictions),
                "found": judge(facts, answer, settings.contradiction_min_confidence)}

    def persist(uow, inputs, result):
        provenance = {r["id"]: r["provenance"] for r in inputs["rows"]}
        records = [_contradiction_record(c, provenance) for c in result["found"]]
        written = uow.maintenance.write_contradictions(inputs["dataset"], records)
        return {"facts": result["facts"], "claimed": result["claimed"], "contradicts_edges": [str(w) for w in written]}

    return execute_stage(self, req.run_id, "contradiction_check", load=load, compute=compute, persist=persist,
                         optional=True)


def _contradiction_record(found: ContradictionEdge, provenance: dict[Any, list]) -> dict:
    """Endpoints in a canonical order (first fact goes with the source), so the model naming a
    pair the other way round on a rerun updates the same edge instead of adding a mirror."""
    props = dict(found.properties)
    source, target = found.source_id, found.target_id
    first_edge, second_edge = found.first_edge_id, found.second_edge_id
    if str(source) > str(target):
        source, target, first_edge, second_edge = target, source, second_edge, first_edge
        props["first_fact"], props["second_fact"] = props["second_fact"], props["first_fact"]
    props["first_edge_id"], props["second_edge_id"] = str(first_edge), str(second_edge)
    return {
        "source_id": source,
        "target_id": target,
        "properties": props,
        "edge_text": f"{props['first_fact']} contradicts {props['second_fact']}",
        # The conflict lives as long as either fact's sources do (forget drops edges without any).
        "provenance": list(provenance.get(first_edge, [])) + list(provenance.get(second_edge, [])),
    }


# ------------------------------------------------------------------ temporal supersession


@engram_task("engram.maintenance.temporal_supersession", **_stage_options())
def temporal_supersession(self, req: StageRequest) -> dict:
    def load(uow):
        run, touched = _scope(uow, req.run_id)
        functional = normalise_functional((run["params"].get("options") or {}).get("functional_relationships"))
        rows = uow.maintenance.neighbourhood(run["dataset_id"], touched, relationships=list(functional))
        intervals = uow.maintenance.assertions([r["id"] for r in rows])
        return {"dataset": run["dataset_id"], "functional": functional, "touched": touched, "rows": rows,
                "intervals": intervals}

    def compute(inputs):
        if not inputs["functional"]:
            raise StageSkipped("no functional relationships declared")
        facts = assertions_of(inputs["rows"], inputs["intervals"])
        touched = None if inputs["touched"] is None else set(inputs["touched"])
        judgement = judge_intervals(facts, inputs["functional"], touched, now=datetime.now(UTC))
        learned = {a.id: (a.edge_id, a.learned) for a in facts}
        return {
            "intervals": [dict(vars(v), edge_id=learned[v.id][0], learned=learned[v.id][1])
                          for v in interval_changes(judgement, facts)],
            "edges": [(v.id, vars(v)) for v in edge_changes(judgement, {r["id"]: r for r in inputs["rows"]})],
        }

    def persist(uow, inputs, result):
        uow.maintenance.write_intervals(inputs["dataset"], result["intervals"])
        uow.maintenance.tag_supersession(result["edges"])
        return {
            "edges": len(inputs["rows"]),
            "intervals": len(result["intervals"]),
            "superseded": [str(e) for e, tags in result["edges"] if tags["superseded"]],
            "current": [str(e) for e, tags in result["edges"] if not tags["superseded"]],
        }

    return execute_stage(self, req.run_id, "temporal_supersession", load=load, compute=compute, persist=persist,
                         optional=True)


# ------------------------------------------------------------------ whole-dataset passes


def _start_pass(dataset_name: str, user: str, stage: str, options: dict) -> dict:
    """A one-stage maintenance run over the dataset, enqueued after its rows are committed."""
    run_id = uuid.uuid4()
    with Store().unit_of_work() as uow:
        dataset = uow.access.authorise(dataset_name, user, "write")
        uow.runs.create(run_id, "maintenance", [stage], dataset, params={"options": options, "scope": DATASET_SCOPE})
    start_runs([(run_id, [stage])])
    return MaintenanceAccepted(status="accepted", dataset=dataset_name, stage=stage, run_id=run_id).model_dump(
        mode="json")


@engram_task("engram.maintenance.check_contradictions", payload=ContradictionCheckRequest)
def check_contradictions(self, req: ContradictionCheckRequest) -> dict:
    return _start_pass(req.dataset, req.user, "contradiction_check", {"contradiction_check": True})


@engram_task("engram.maintenance.supersede", payload=SupersedeRequest)
def supersede(self, req: SupersedeRequest) -> dict:
    normalise_functional(req.functional_relationships)  # a bad declaration fails here, before any run
    return _start_pass(req.dataset, req.user, "temporal_supersession",
                       {"functional_relationships": req.functional_relationships})
