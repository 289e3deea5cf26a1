"""Graph shapes the LLM returns. Names and fields are a stable cassette contract."""

from __future__ import annotations

from pydantic import BaseModel, Field

from engram.models.tables import edges

# A relationship name is loaded into edges.relationship: longer LLM output is invalid output
# (refused before the load, like any other schema violation), never a failed load.
RELATIONSHIP_MAX_LENGTH: int = edges.c.relationship.type.length


class Node(BaseModel):
    id: str
    name: str
    type: str = "concept"
    description: str = ""


class Edge(BaseModel):
    source_node_id: str
    target_node_id: str
    relationship_name: str = Field(max_length=RELATIONSHIP_MAX_LENGTH)
    description: str | None = None
    # When the fact held, as ISO dates at the precision the text gives ("2015", "2015-03",
    # "2015-03-04"); None when the text does not say. Engram reads anything else as unknown.
    valid_from: str | None = None
    valid_to: str | None = None


class KnowledgeGraph(BaseModel):
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)


class SummarizedContent(BaseModel):
    summary: str
    description: str = ""


class ChunkExtraction(BaseModel):
    """One-call mode: the graph and the summary of one chunk together."""

    graph: KnowledgeGraph
    summary: SummarizedContent
