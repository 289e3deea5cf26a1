"""The search-type registry: one recipe per search type (Graphiti-recipe style).

A recipe says everything recall does differently per type: the lane that retrieves, the fusion
weights of the ranked lists it fuses, whether it ends in a generated answer (and whether a
follow-up lookup comes first), the prompt instructions describing its context, and the router
rules that vote for it (SPEC §5). Adding a search type means adding one recipe here; no other
module names a search type (the router's default and FEELING_LUCKY aside).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from engram.models.payloads import RecallItem
from engram.models.search import SearchType
from engram.pipelines.dates import YEAR
from engram.pipelines.recall import captures, graph, lanes, temporal
from engram.pipelines.recall.context import RecallContext
from engram.pipelines.recall.router import QUESTION, Rule, rule

Lane = Callable[[RecallContext], list[RecallItem]]


@dataclass(frozen=True)
class Recipe:
    lane: Lane
    completes: bool = False  # an LLM answer follows the retrieved context
    followup: bool = False  # before answering, ask for the missing piece and look it up (chain of thought)
    style: str | None = None  # what the context is, told to the answering model (prompts/recall.py)
    # Weighted RRF over ranked lists (lanes.LISTS names); empty for single-list lanes.
    weights: Mapping[str, float] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()  # router rules voting for this type
    node_sets: bool = False  # its lane reads passages only, so a node_sets filter applies

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))


# Fusion of the passage lanes: dense and BM25 equally; graph expansion (bridges from the first
# hop, each term scaled by the walk's strength for it) counts triple, so a strong bridge stands
# beside passages both other lists agree on (bench/recall_quality.py, default route R@5: templated
# .93 / .96 / .97 and natural untitled .90 at graph 2.0 / 2.5 / 3.0). Summary vectors stay out:
# offline summaries repeat the chunk's opening, so they would count the dense signal twice (give
# them weight when an LLM writes them).
HYBRID_WEIGHTS = {"dense": 1.0, "bm25": 1.0, "graph": 3.0}

_YEAR = rf"(?:{YEAR})"  # the one year rule (pipelines/dates)
# A year asks about time unless it names a thing: "the 2017 horror film", "Nirvana's 1991 album",
# "the original 1977 Star Wars film", "the 2015-16 season" (a determiner or possessive before it, a
# word after it) qualify what the question is about (HotpotQA-style questions are full of them)
# and are no period to filter by: they match as `skip`. "in 2023 about pricing", "2019 vs 2020"
# and a year followed by a time word still ask about a period.
_TIME_WORDS = ("and|or|to|through|until|till|onwards?|in|on|at|by|for|from|with|when|where|while|as|of|"
               "after|before|since|during|between|around|about|versus|vs|compared|ad|bc|bce|ce|was|were|is|"
               "are|did|had|has|exactly|overall")
ASKED_YEAR = (rf"(?P<skip>\b(?:the|a|an|its|his|her|their|this|that|\w+['\u2019]s)\s+(?:[\w-]+\s+)?"
              rf"(?:{YEAR})(?:[\u2013-]\d{{2,4}})?\s+(?!(?:{_TIME_WORDS})\b)[a-z])|\b{_YEAR}\b")
# "Before creating the show, its creator..." orders two events and "named after" names; neither
# asks for a date ("after Thanksgiving" does: a gerund is lower case).
ASKED_WHEN = (r"\b(?:when|before(?!\s+(?-i:[a-z]\w*ing)\b)"
              r"|(?<!named )(?<!called )after(?!\s+(?-i:[a-z]\w*ing)\b))\b")
# Relational wording that names one thing through another ("the director of", "the woman who",
# "the writer and director of", "the Austin-born designer who", "a pizza delivery boy who", "a spy
# for which agency"). It also silences "a meeting that was held in 2023": a date question sent to
# the hybrid route still finds its passages, where a two-hop question sent to TEMPORAL's date
# filter loses its bridge.
MULTI_HOP = (r"\bthe\s+(?:[\w'\u2019-]+\s+){0,3}?(?:of|who|whom|whose|that|which)\s+(?:the\s+)?[\w\"\u201c]"
             r"|\b(?:a|an)\s+(?:[\w'\u2019-]+\s+){0,3}?(?:who|whom|whose|that|which)\s")
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
        graph.graph_summary, completes=True,
        style="The context is document summaries and facts. Answer with a concise overview.",
        rules=(rule("summary", 5.0,
                    r"\b(?:summary|summaries|summari[sz](?:e|es|ed|ing)|overview|tl;?dr|gist|recap)\b"),)),
    SearchType.GRAPH_COMPLETION_COT: Recipe(
        graph.graph_completion, completes=True, followup=True,
        style="The context is facts from a knowledge graph and passages. Think step by step: write your "
              "reasoning in a few short lines, then the final answer on its own line starting with 'Answer:'.",
        rules=(rule("why", 4.0, r"\b(?:why|explain\w*)\b"), rule("because", 2.0, r"\b(?:because|therefore)\b"))),
    SearchType.GRAPH_COMPLETION_CONTEXT_EXTENSION: Recipe(
        graph.context_extension, completes=True,
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
               # "over a decade", "for decades" are durations, not a period asked about.
               rule("timeline", 4.0, r"\btimelines?\b|(?<!\ba )(?<!\bfor )\bdecades?\b"),
               # "When was the director of X born?" is a two-hop question: the hybrid route's
               # graph expansion serves it better than a date filter.
               rule("when", 3.0, ASKED_WHEN, unless=MULTI_HOP),
               rule("year", 3.0, ASKED_YEAR, unless=MULTI_HOP))),
    SearchType.CHUNKS: Recipe(lanes.chunks, node_sets=True),
    SearchType.SUMMARIES: Recipe(lanes.summaries, node_sets=True),
    SearchType.RAG_COMPLETION: Recipe(lanes.chunks, completes=True, style=_PASSAGES, node_sets=True),
    SearchType.HYBRID_COMPLETION: Recipe(
        lanes.hybrid, completes=True, weights=HYBRID_WEIGHTS, node_sets=True,
        style="The context is passages ranked by meaning, by keywords and by the entities linking them."),
    SearchType.GRAPH_COMPLETION: Recipe(graph.graph_completion, completes=True, style=_FACTS),
    SearchType.CAPTURES: Recipe(captures.captures),  # SPEC §9: chosen by its filters, never routed
    SearchType.TRIPLET_COMPLETION: Recipe(
        graph.triplet_completion, completes=True,
        style="The context is facts written as subject, relationship, object, each with its source passage."),
}


def recipe(search_type: SearchType) -> Recipe | None:
    return REGISTRY.get(search_type)


def router_rules() -> tuple[tuple[SearchType, Rule], ...]:
    """Every rule with the type it votes for, in declaration order."""
    return tuple((t, r) for t, rec in REGISTRY.items() for r in rec.rules)
