"""The search-type registry: one recipe per search type (Graphiti-recipe style).

A recipe says everything recall does differently per type: the lane that retrieves, the fusion
weights of the ranked lists it fuses, whether it ends in a generated answer (and whether a
follow-up lookup comes first), the prompt instructions describing its context, and the router
rules that vote for it (SPEC §5), and the roles it plays outside recall's route (the agentic
tool loop, captured-object filters, the agent's tools). Adding a search type means adding one
recipe here; no other module names a search type (the router's default and FEELING_LUCKY aside;
tests/unit/test_architecture.py checks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from engram.models.payloads import RecallItem
from engram.models.search import SearchType
from engram.pipelines.dates import LONE_YEAR, YEAR
from engram.pipelines.recall import captures, graph, lanes, temporal
from engram.pipelines.recall.context import RecallContext
from engram.pipelines.recall.router import QUESTION, Rule, rule

Lane = Callable[[RecallContext], list[RecallItem]]


@dataclass(frozen=True)
class Recipe:
    lane: Lane | None  # None: recall's engine does not serve it (the agentic tool loop answers)
    completes: bool = False  # an LLM answer follows the retrieved context
    followup: bool = False  # before answering, ask for the missing piece and look it up (chain of thought)
    style: str | None = None  # what the context is, told to the answering model (prompts/recall.py)
    # Weighted RRF over ranked lists (lanes.LISTS names); empty for single-list lanes.
    weights: Mapping[str, float] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()  # router rules voting for this type
    node_sets: bool = False  # its lane reads passages only, so a node_sets filter applies
    # Auto-routed, it answers in its own style over the default route's passages: its own lane
    # drops passages, which wording like "why" does not ask for (a pinned type uses its lane).
    routed_passages: bool = False
    # Weights that replace `weights`' entries when the question names one thing through another
    # (MULTI_HOP wording: "the director of X", "the woman who ..."): a second hop is what it asks.
    relational: Mapping[str, float] = field(default_factory=dict)
    vector: bool = True  # its lane reads the question's embedding (computed ahead, meanwhile)
    # Answered by the bounded tool loop (SPEC 8): it alone takes skills and tools, over one dataset.
    agentic: bool = False
    capture_filters: bool = False  # chosen whenever a recall filters captured objects (SPEC §9)

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "relational", MappingProxyType(dict(self.relational)))

    def weights_for(self, question: str) -> Mapping[str, float]:
        if self.relational and _RELATIONAL.search(question):
            return MappingProxyType({**self.weights, **self.relational})
        return self.weights


# Dense and BM25 fused by score; the graph's walk joins only for relational questions (why: bench/NOTES.md).
HYBRID_WEIGHTS = {"dense": 1.0, "bm25": 1.0}
RELATIONAL_WEIGHTS = {"graph": 3.0}

_YEAR = rf"(?:{YEAR})"  # the one year rule (pipelines/dates)
# A question earns the date filter only by naming a date or period; a year qualifying a thing matches as `skip`.
_TIME_WORDS = ("and|or|to|through|until|till|onwards?|in|on|at|by|for|from|with|when|where|while|as|of|"
               "after|before|since|during|between|around|about|versus|vs|compared|ad|bc|bce|ce|was|were|is|"
               "are|did|had|has|exactly|overall")
ASKED_YEAR = (rf"(?P<skip>\b(?:the|a|an|its|his|her|their|this|that|\w+['\u2019]s)\s+(?:[\w-]+\s+)?"
              rf"(?:{YEAR})(?:[\u2013-]\d{{2,4}})?\s+(?!(?:{_TIME_WORDS})\b)[a-z])|{LONE_YEAR}")
# Relational wording that names one thing through another ("the director of", "the woman who").
MULTI_HOP = (r"\bthe\s+(?:[\w'\u2019-]+\s+){0,3}?(?:of|who|whom|whose|that|which)\s+(?:the\s+)?[\w\"\u201c]"
             r"|\b(?:a|an)\s+(?:[\w'\u2019-]+\s+){0,3}?(?:who|whom|whose|that|which)\s")
_RELATIONAL = re.compile(MULTI_HOP, re.IGNORECASE)
_PASSAGES = "The context is passages from documents."
_FACTS = ("The context is facts from a knowledge graph, written as subject, relationship, object, each "
          "with the passage it was read from.")

# Declaration order is the router's tie-break between types with equal totals.
REGISTRY: dict[SearchType, Recipe] = {
    SearchType.CHUNKS_LEXICAL: Recipe(lanes.chunks_lexical, node_sets=True, rules=(
        # A quoted phrase searched for; a question quoting a title is left to the default route.
        rule("quoted", 8.0, r"[\"\u201c][^\"\u201c\u201d]+[\"\u201d]", unless=QUESTION),
        rule("exact", 4.0, r"\b(?:exact|verbatim)\b"),
    )),
    SearchType.GRAPH_SUMMARY_COMPLETION: Recipe(
        graph.graph_summary, completes=True, routed_passages=True,
        style="The context is document summaries and facts. Answer with a concise overview.",
        rules=(rule("summary", 5.0,
                    r"\b(?:summary|summaries|summari[sz](?:e|es|ed|ing)|overview|tl;?dr|gist|recap)\b"),)),
    SearchType.GRAPH_COMPLETION_COT: Recipe(
        graph.graph_completion, completes=True, followup=True, routed_passages=True,
        style="The context is facts from a knowledge graph and passages. Think step by step: write your "
              "reasoning in a few short lines, then the final answer on its own line starting with 'Answer:'.",
        rules=(rule("why", 4.0, r"\b(?:why|explain\w*)\b"), rule("because", 2.0, r"\b(?:because|therefore)\b"))),
    SearchType.GRAPH_COMPLETION_CONTEXT_EXTENSION: Recipe(
        graph.context_extension, completes=True, routed_passages=True,
        style="The context is facts from a knowledge graph, expanded along the connections between "
              "entities; explain how the entities are connected, step by step through the facts.",
        rules=(rule("connection", 5.0,
                    r"\bhow\s+(?:is|are|was|were)\b.{0,80}?\brelated\b|\bwhat\s+connects?\b|\bpaths?\s+between\b"),
               rule("relationship", 3.0, r"\brelationships?\b"))),
    SearchType.TEMPORAL: Recipe(
        temporal.temporal, completes=True,
        style="The context is dated passages and facts. Mind the years: order events in time and answer "
              "when / before / after / between questions precisely.",
        rules=(rule("year_range", 6.0, rf"\bbetween\s+{_YEAR}\s+and\s+{_YEAR}\b"),
               rule("timeline", 4.0, r"\btimelines?\b|(?<!\ba )(?<!\bfor )\bdecades?\b"),
               rule("year", 3.0, ASKED_YEAR, unless=MULTI_HOP))),
    SearchType.CHUNKS: Recipe(lanes.chunks, node_sets=True),
    SearchType.SUMMARIES: Recipe(lanes.summaries, node_sets=True),
    SearchType.RAG_COMPLETION: Recipe(lanes.chunks, completes=True, style=_PASSAGES, node_sets=True),
    SearchType.HYBRID_COMPLETION: Recipe(
        lanes.hybrid, completes=True, weights=HYBRID_WEIGHTS, relational=RELATIONAL_WEIGHTS, node_sets=True,
        style="The context is passages ranked by meaning, by keywords and by the entities linking them."),
    SearchType.GRAPH_COMPLETION: Recipe(graph.graph_completion, completes=True, style=_FACTS),
    SearchType.CAPTURES: Recipe(captures.captures, vector=False, capture_filters=True),  # never routed
    SearchType.TRIPLET_COMPLETION: Recipe(
        graph.triplet_completion, completes=True,
        style="The context is facts written as subject, relationship, object, each with its source passage."),
    SearchType.AGENTIC_COMPLETION: Recipe(None, agentic=True),  # pipelines/agentic/completion
}

# The passage lanes the default route fuses (dense, BM25), each also a search type of its own:
# what the explorer's playground asks one by one to show a question's lanes.
FUSED_PASSAGE_LANES: tuple[str, ...] = (SearchType.CHUNKS.value, SearchType.CHUNKS_LEXICAL.value)

# The agent's lookups (pipelines/agentic): what "# Memory" is read with, and what its
# search_memory tool may ask for, in the order the tool's description lists them.
AGENT_MEMORY = SearchType.GRAPH_COMPLETION
AGENT_SEARCHABLE: tuple[str, ...] = tuple(t.value for t in (
    SearchType.CHUNKS, SearchType.CHUNKS_LEXICAL, SearchType.SUMMARIES, SearchType.GRAPH_COMPLETION,
    SearchType.TRIPLET_COMPLETION, SearchType.TEMPORAL))
AGENT_SEARCH_DEFAULT = SearchType.CHUNKS.value


def recipe(search_type: SearchType) -> Recipe | None:
    return REGISTRY.get(search_type)


def serves(search_type: SearchType) -> bool:
    """Whether recall's engine (a lane, maybe a completion) answers this type."""
    found = REGISTRY.get(search_type)
    return found is not None and found.lane is not None


def is_agentic(name: str | None) -> bool:
    """Whether a request's search type (a name) is answered by the agentic tool loop."""
    found = REGISTRY.get(SearchType.__members__.get(name or ""))
    return found is not None and found.agentic


def named(flag: str) -> str:
    """The name of the one type whose recipe sets `flag` (agentic, capture_filters)."""
    [found] = [t.value for t, r in REGISTRY.items() if getattr(r, flag)]
    return found


def router_rules() -> tuple[tuple[SearchType, Rule], ...]:
    """Every rule with the type it votes for, in declaration order."""
    return tuple((t, r) for t, rec in REGISTRY.items() for r in rec.rules)
