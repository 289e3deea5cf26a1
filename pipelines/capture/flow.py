"""The capture flow: admit → normalize → link → enrich → reason (SPEC 9).

Every stage is optional (isolated): its failure is recorded, later stages still run and the
run ends `partial`; the object, admitted by the producer task, is never rolled back. What a
stage reads comes from the store (the object, its persisted request, earlier stages'
outputs), so a reprocess resumes at the failed stage with the caller's original inputs.

Stage functions follow pipelines/flow.py: load(uow, ctx), compute(inputs, ctx),
persist(uow, ctx, inputs, result); ctx.ports gives llm() and embedder().
"""

from __future__ import annotations

import uuid

from engram.pipelines import ids
from engram.pipelines.capture.enrich import enrich
from engram.pipelines.capture.link import RECENT_OBJECTS, choose_entities, link
from engram.pipelines.capture.normalize import normalize
from engram.pipelines.capture.reason import reason
from engram.pipelines.capture.vocabulary import predicate_of
from engram.pipelines.errors import BadInput
from engram.pipelines.facts import fact_text
from engram.pipelines.flow import OPTIONAL, Flow, Stage


def object_of(run: dict) -> uuid.UUID:
    """The captured object a capture run works on: stored as a data item, the run's item is it."""
    return run["data_item_id"]


def _object(uow, ctx) -> dict:
    obj = uow.capture.get(object_of(ctx.run))
    if obj is None:
        raise BadInput(f"captured object of run {ctx.run['id']} was forgotten before its pipeline finished")
    return obj


def _embed(ctx, keyed: list[tuple[object, str]]) -> dict:
    if not keyed:
        return {}
    vectors = ctx.ports.embedder().embed([t for _, t in keyed])
    return {k: list(v) for (k, _), v in zip(keyed, vectors)}


# ------------------------------------------------------------------ normalize


def load_normalize(uow, ctx) -> dict:
    return _object(uow, ctx)


def compute_normalize(obj: dict, ctx) -> dict:
    result = normalize(obj, obj["request"] or {}, ctx.ports.llm())
    vectors = _embed(ctx, [("chunk", obj["text"]), ("summary", result["summary"]), ("title", obj["title"])])
    return {"result": result, "vectors": vectors}


def persist_normalize(uow, ctx, obj: dict, out: dict) -> dict:
    uow.capture.apply_normalize(obj, out["result"], out["vectors"])
    r = out["result"]
    return {"type": r["type"], "classified_type": r["classified_type"], "confidence": r["confidence"],
            "llm": r["llm"], "entities": r["entities"]}


# ------------------------------------------------------------------ link


def load_link(uow, ctx) -> dict:
    obj = _object(uow, ctx)
    normalized = uow.runs.stage_output(ctx.run["id"], NORMALIZE.name) or {}
    return {"object": obj, "extracted": normalized.get("entities"),
            "candidates": uow.capture.recent(obj["dataset_id"], obj["id"], RECENT_OBJECTS)}


def compute_link(inputs: dict, ctx) -> dict:
    obj = inputs["object"]
    entities = choose_entities((obj["request"] or {}).get("entities"), inputs["extracted"])
    new = {"id": obj["id"], "dataset_id": obj["dataset_id"], "title": obj["title"], "type": obj["obj_type"],
           "content": obj["content"]}
    plan = link(new, entities, inputs["candidates"], ctx.ports.llm())
    plan["vectors"] = _embed(ctx, [(n["id"], n["name"]) for n in plan["nodes"]]
                             + [(e["id"], e["edge_text"]) for e in plan["edges"]])
    return plan


def persist_link(uow, ctx, inputs: dict, plan: dict) -> dict:
    uow.capture.apply_link(inputs["object"], plan["nodes"], plan["edges"], plan["vectors"])
    return {"entities": [{"name": n["name"], "type": n["type"]} for n in plan["nodes"]],
            "edges": [{"source": str(e["source_id"]), "target": str(e["target_id"]),
                       "predicate": e["properties"]["predicate"]} for e in plan["edges"]],
            "rejected": plan["rejected"], "candidates": plan["candidates"]}


# ------------------------------------------------------------------ enrich


def load_enrich(uow, ctx) -> dict:
    obj = _object(uow, ctx)
    return {"object": obj, "edges": uow.capture.edges_of(obj["id"]),
            "superseded": uow.capture.superseded(obj["dataset_id"])}


def compute_enrich(inputs: dict, ctx) -> dict:
    return enrich(inputs["object"], inputs["edges"], inputs["superseded"])


def persist_enrich(uow, ctx, inputs: dict, result: dict) -> dict:
    uow.capture.apply_enrich(inputs["object"]["id"], result)
    return result


# ------------------------------------------------------------------ reason


def load_reason(uow, ctx) -> dict:
    obj = _object(uow, ctx)
    edges = uow.capture.reasoning_edges(obj["dataset_id"])
    ends = {e["source_id"] for e in edges} | {e["target_id"] for e in edges}
    return {"object": obj, "edges": edges, "titles": uow.capture.titles(list(ends))}


def compute_reason(inputs: dict, ctx) -> dict:
    dataset = inputs["object"]["dataset_id"]
    provenance = {(e["source_id"], e["target_id"], e["relationship"]): list(e["provenance"]) for e in inputs["edges"]}
    done = reason(list(provenance))
    titles = inputs["titles"]
    rows = []
    for inf in done.inferred:
        key = (inf.source, inf.target, inf.relationship)
        # An inference lives as long as every premise's sources do (forget drops it with any).
        provenance[key] = sorted({c for p in inf.premises for c in provenance.get(p, [])}, key=str)
        rows.append({
            "id": ids.edge_id(dataset, inf.source, inf.target, inf.relationship), "source_id": inf.source,
            "target_id": inf.target, "relationship": inf.relationship, "provenance": provenance[key],
            "edge_text": fact_text(titles.get(inf.source, inf.source), inf.relationship,
                                   titles.get(inf.target, inf.target)),
            "properties": {"predicate": predicate_of(inf.relationship), "origin": "reasoner", "provenance": {
                "rule": inf.rule,
                "premises": [str(ids.edge_id(dataset, s, t, r)) for s, t, r in inf.premises]}},
        })
    vectors = _embed(ctx, [(r["id"], r["edge_text"]) for r in rows])
    return {"rows": rows, "vectors": vectors, "rule_counts": done.rule_counts, "iterations": done.iterations,
            "fixpoint": done.fixpoint}


def persist_reason(uow, ctx, inputs: dict, out: dict) -> dict:
    obj = inputs["object"]
    uow.capture.upsert_edges(obj["dataset_id"], out["rows"], [], out["vectors"], keep_existing=True)
    uow.capture.mark_reasoned(obj["id"])
    return {"inferred": len(out["rows"]), "rule_counts": out["rule_counts"], "iterations": out["iterations"],
            "fixpoint": out["fixpoint"], "edges": [str(r["id"]) for r in out["rows"]]}


# ------------------------------------------------------------------ the declaration

ADMIT = Stage("admit", "ingest", "capture")  # recorded by engram.capture with the object
NORMALIZE = Stage("normalize", "llm", "capture", load=load_normalize, compute=compute_normalize,
                  persist=persist_normalize, failure=OPTIONAL)
LINK = Stage("link", "llm", "capture", load=load_link, compute=compute_link, persist=persist_link, failure=OPTIONAL)
ENRICH = Stage("enrich", "maintenance", "capture", load=load_enrich, compute=compute_enrich, persist=persist_enrich,
               failure=OPTIONAL)
REASON = Stage("reason", "maintenance", "capture", load=load_reason, compute=compute_reason, persist=persist_reason,
               failure=OPTIONAL)

CAPTURE = Flow("capture", (ADMIT, NORMALIZE, LINK, ENRICH, REASON), partial=True)


def open_run(uow, run_id: uuid.UUID, dataset: uuid.UUID, object_id: uuid.UUID) -> list[str]:
    """Record a capture run of an admitted object with `admit` done; returns the stages still to run."""
    stages = CAPTURE.stages_for()
    uow.runs.open(run_id, CAPTURE.name, stages, dataset=dataset, data_item=object_id,
                  done={ADMIT.name: {"object_id": str(object_id)}})
    uow.capture.set_run(object_id, run_id)
    return stages[1:]


def to_reprocess(stage_rows: list[dict]) -> list[str]:
    """Resume at the first failed stage (it and every later one rerun); nothing failed: rerun all."""
    rows = [s for s in stage_rows if s["stage"] != ADMIT.name]
    failed = [i for i, s in enumerate(rows) if s["status"] == "failed"]
    return [s["stage"] for s in rows[failed[0] if failed else 0:]]
