"""The graph passes (SPEC 7): contradiction check and temporal supersession, declared once.

In a cognify run they follow embed_and_load and look at the entities it touched; started on
their own (engram.maintenance.check_contradictions / engram.maintenance.supersede) they are the
one stage of a "maintenance" run over the whole dataset. Either way they are optional stages: a
failure is recorded on the stage and the run still completes, because the ingested data they
examine is committed and valid. Both are idempotent: a second pass writes nothing new.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from engram.pipelines.facts import CONTRADICTS, NOT_FACTS, fact_text
from engram.pipelines.flow import OPTIONAL, Flow, Stage, StageSkipped
from engram.pipelines.maintenance.contradictions import (
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

DATASET_SCOPE = "dataset"


def _touched(uow, ctx) -> list[uuid.UUID] | None:
    """The entities the run's load touched, or None for a whole-dataset pass."""
    from engram.pipelines.cognify.flow import EMBED_AND_LOAD  # the cognify flow includes these passes

    if ctx.run["params"].get("scope") == DATASET_SCOPE:
        return None
    loaded = uow.runs.stage_output(ctx.run_id, EMBED_AND_LOAD.name) or {}
    return [uuid.UUID(e) for e in loaded.get("touched_entities", [])]


# ------------------------------------------------------------------ contradiction check


def load_contradictions(uow, ctx) -> dict:
    touched = _touched(uow, ctx)
    rows = uow.maintenance.neighbourhood(ctx.run["dataset_id"], touched, exclude=NOT_FACTS, newest_first=True,
                                         limit=ctx.settings.contradiction_max_facts * 2)
    return {"dataset": ctx.run["dataset_id"], "touched": touched, "rows": rows}


def compute_contradictions(inputs: dict, ctx) -> dict:
    settings = ctx.settings
    rows = inputs["rows"]
    names = {r["source_id"]: r["source_name"] for r in rows} | {r["target_id"]: r["target_name"] for r in rows}
    names = {k: v for k, v in names.items() if v}
    touched = inputs["touched"]
    if touched is None:
        touched = {r["source_id"] for r in rows} | {r["target_id"] for r in rows}
    facts = select_facts(rows, names, set(touched), settings.contradiction_max_facts)
    if not needs_check(facts):
        raise StageSkipped(f"{len(facts)} fact(s) in the touched neighbourhood: nothing to compare")
    answer = ctx.ports.llm().structured(contradiction_prompt(facts_text(facts)), ContradictionList)
    return {"facts": len(facts), "claimed": len(answer.contradictions),
            "found": judge(facts, answer, settings.contradiction_min_confidence)}


def persist_contradictions(uow, ctx, inputs: dict, result: dict) -> dict:
    provenance = {r["id"]: r["provenance"] for r in inputs["rows"]}
    records = [contradiction_record(c, provenance) for c in result["found"]]
    written = uow.maintenance.write_contradictions(inputs["dataset"], records)
    return {"facts": result["facts"], "claimed": result["claimed"], "contradicts_edges": [str(w) for w in written]}


def contradiction_record(found: ContradictionEdge, provenance: dict[Any, list]) -> dict:
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
        "edge_text": fact_text(props["first_fact"], CONTRADICTS, props["second_fact"]),
        # The conflict lives as long as either fact's sources do (forget drops edges without any).
        "provenance": list(provenance.get(first_edge, [])) + list(provenance.get(second_edge, [])),
    }


# ------------------------------------------------------------------ temporal supersession


def load_supersession(uow, ctx) -> dict:
    touched = _touched(uow, ctx)
    functional = normalise_functional((ctx.run["params"].get("options") or {}).get("functional_relationships"))
    rows = uow.maintenance.neighbourhood(ctx.run["dataset_id"], touched, relationships=list(functional))
    intervals = uow.maintenance.assertions([r["id"] for r in rows])
    return {"dataset": ctx.run["dataset_id"], "functional": functional, "touched": touched, "rows": rows,
            "intervals": intervals}


def compute_supersession(inputs: dict, ctx) -> dict:
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


def persist_supersession(uow, ctx, inputs: dict, result: dict) -> dict:
    uow.maintenance.write_intervals(inputs["dataset"], result["intervals"])
    uow.maintenance.tag_supersession(result["edges"])
    return {
        "edges": len(inputs["rows"]),
        "intervals": len(result["intervals"]),
        "superseded": [str(e) for e, tags in result["edges"] if tags["superseded"]],
        "current": [str(e) for e, tags in result["edges"] if not tags["superseded"]],
    }


# ------------------------------------------------------------------ the declaration

CONTRADICTION_CHECK = Stage(
    "contradiction_check", "maintenance", "maintenance", load=load_contradictions, compute=compute_contradictions,
    persist=persist_contradictions, failure=OPTIONAL, include=lambda options: bool(options.get("contradiction_check")))
TEMPORAL_SUPERSESSION = Stage(
    "temporal_supersession", "maintenance", "maintenance", load=load_supersession, compute=compute_supersession,
    persist=persist_supersession, failure=OPTIONAL,
    include=lambda options: bool(options.get("functional_relationships")))

# A whole-dataset pass: a run of the one stage its options ask for.
MAINTENANCE = Flow("maintenance", (CONTRADICTION_CHECK, TEMPORAL_SUPERSESSION))


def contradiction_options() -> dict:
    return {"contradiction_check": True}


def supersession_options(functional_relationships) -> dict:
    return {"functional_relationships": functional_relationships}
