"""The cognify orchestrator: which stages a run has, in order. Pure; tasks run them."""

from __future__ import annotations

BASE_STAGES = ["add", "classify", "chunk", "extract_graph_and_summarize", "embed_and_load"]
MAINTENANCE_STAGES = ["contradiction_check", "temporal_supersession"]


def stages_for(options: dict) -> list[str]:
    """The stage list of one item's run; maintenance passes only when enabled for it."""
    stages = list(BASE_STAGES)
    if options.get("contradiction_check"):
        stages.append("contradiction_check")
    if options.get("functional_relationships"):
        stages.append("temporal_supersession")
    return stages
