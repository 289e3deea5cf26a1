"""Search types recall understands (SPEC §5). Values equal names: they travel in payloads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum


class SearchType(str, Enum):
    CHUNKS = "CHUNKS"
    CHUNKS_LEXICAL = "CHUNKS_LEXICAL"
    SUMMARIES = "SUMMARIES"
    RAG_COMPLETION = "RAG_COMPLETION"
    GRAPH_COMPLETION = "GRAPH_COMPLETION"
    GRAPH_COMPLETION_COT = "GRAPH_COMPLETION_COT"
    GRAPH_COMPLETION_CONTEXT_EXTENSION = "GRAPH_COMPLETION_CONTEXT_EXTENSION"
    GRAPH_SUMMARY_COMPLETION = "GRAPH_SUMMARY_COMPLETION"
    TRIPLET_COMPLETION = "TRIPLET_COMPLETION"
    HYBRID_COMPLETION = "HYBRID_COMPLETION"
    TEMPORAL = "TEMPORAL"
    FEELING_LUCKY = "FEELING_LUCKY"  # the router picks
    AGENTIC_COMPLETION = "AGENTIC_COMPLETION"  # SPEC §8
    CAPTURES = "CAPTURES"  # captured knowledge objects (SPEC §9), filtered by type, project, tags


@dataclass(frozen=True)
class EdgeWindow:
    """Which edges a graph lane may read (SPEC §5 Beyond).

    Precedence: `as_of` (edges valid at that instant, superseded later or not) over
    `include_history` (every edge, superseded ones flagged) over the default (current edges
    only: not superseded, not expired).
    """

    as_of: datetime | None = None
    include_history: bool = False

    @property
    def mode(self) -> str:
        if self.as_of is not None:
            return "as_of"
        return "history" if self.include_history else "current"
