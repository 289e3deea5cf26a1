"""global_context_index (opt-in): a dataset-level overview document refreshed from the graph.

The most connected entities and their facts, rendered deterministically; the document is
replaced only when its text changes (same graph → same text → already_completed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
        by_source.setdefault(f["source"], []).append(f"{f['source']} {f['relationship'].replace('_', ' ')} {f['target']}.")
    for e in entities:
        head = f"{e['name']}" + (f" ({e['type']})" if e.get("type") else "")
        description = (e.get("description") or "").strip()
        lines.append(f"- {head}: {description}" if description else f"- {head}")
        for fact in sorted(set(by_source.get(e["name"], [])))[:FACTS_PER_ENTITY]:
            lines.append(f"  - {fact}")
    return "\n".join(lines).rstrip() + "\n"


def item_name(dataset_name: str) -> str:
    return f"dataset-overview-{dataset_name}.md"
