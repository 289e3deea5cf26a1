"""global_context_index (opt-in): a dataset-level overview document refreshed from the graph.

The most connected entities and their facts, rendered deterministically; the document is
replaced only when its text changes (same graph → same text → already_completed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engram.models.payloads import RememberItem
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.facts import fact_text
from engram.pipelines.flow import Published

NODE_SET = "global_context"
TOP_ENTITIES = 12
FACTS_PER_ENTITY = 5


def render(dataset_name: str, entities: Sequence[Mapping], facts: Sequence[Mapping]) -> str:
    """entities: name, type, description, degree (most connected first); facts: source,
    relationship, target (the entities' facts)."""
    lines = [f"# Dataset overview ({dataset_name})", ""]
    if not entities:
        return "\n".join(lines + ["The dataset holds no entities yet.", ""])
    lines.append("Main entities: " + ", ".join(e["name"] for e in entities) + ".")
    lines.append("")
    by_source: dict[str, list[str]] = {}
    for f in facts:
        by_source.setdefault(f["source"], []).append(fact_text(f["source"], f["relationship"], f["target"]) + ".")
    for e in entities:
        head = f"{e['name']}" + (f" ({e['type']})" if e.get("type") else "")
        description = (e.get("description") or "").strip()
        lines.append(f"- {head}: {description}" if description else f"- {head}")
        for fact in sorted(set(by_source.get(e["name"], [])))[:FACTS_PER_ENTITY]:
            lines.append(f"  - {fact}")
    return "\n".join(lines).rstrip() + "\n"


def item_name(dataset_name: str) -> str:
    return f"dataset-overview-{dataset_name}.md"


# ------------------------------------------------------------------ the stage


def _render(uow, ctx) -> str:
    entities, facts = uow.learning.overview(ctx.dataset_id, TOP_ENTITIES)
    return render(uow.access.dataset_name(ctx.dataset_id), entities, facts)


def gate(uow, ctx):
    current = uow.learning.overview_documents(ctx.dataset_id)
    if current and current[0]["content"] == _render(uow, ctx):
        return ("already_completed", "the overview matches the graph")
    return None


def load(uow, ctx) -> dict:
    """The overview as the graph reads now, and the stored overview documents it replaces."""
    text = _render(uow, ctx)
    return {"text": text, "name": item_name(uow.access.dataset_name(ctx.dataset_id)),
            "old": [r["id"] for r in uow.learning.overview_documents(ctx.dataset_id) if r["content"] != text]}


def compute(inputs: dict, ctx) -> dict:
    """The overview's document (node set global_context)."""
    return {"item": prepare(RememberItem(text=inputs["text"], name=inputs["name"]), ctx.settings.max_content_bytes, 0)}


def publish(uow, ctx, inputs: dict, result: dict) -> Published:
    """Replace the overview document; the engine cognifies the new one here."""
    removed = uow.graph.forget_items(inputs["old"]) if inputs["old"] else {"items": 0}
    _, run_id, stages = ctx.ports.add_document(uow, result["item"], source=ctx.stage.name, node_sets=[NODE_SET])
    return Published(((run_id, stages),) if stages else (), {"replaced": removed["items"],
                                                             "characters": len(inputs["text"])})
