"""Extraction prompts: each function returns litellm messages; its docstring names the model
(models/graph.py) the answer must validate as. The chunk text is placed verbatim in the user message because replay
cassettes match on substrings of the prompt.
"""

from __future__ import annotations

Messages = list[dict[str, str]]

_GRAPH_RULES = """\
Build a knowledge graph of the entities in the text and the facts that connect them.

Nodes:
- id: a short local id unique within this answer, such as "n1", "n2".
- name: the entity's name exactly as it appears in the text (no pronouns; resolve "she",
  "the company" to the named entity when the text makes it clear).
- type: one lower-case word such as person, organization, place, concept, event, date,
  product, technology.
- description: one sentence about the entity, using only what the text says.
- Give the same real-world entity one node; give two different things that share a name two
  nodes with different ids.

Edges:
- source_node_id / target_node_id: ids of nodes you declared above.
- relationship_name: a lower_snake verb phrase, e.g. ceo_of, founded, works_at, located_in,
  acquired, part_of, born_in. Prefer specific verbs over related_to. Name the state, not its
  tense or change: "became / was re-elected / is the former mayor of" are all mayor_of.
- description: the fact in one sentence; always include any dates or time spans the text
  gives for it and words like "former" (e.g. "Alice became CEO of Acme in March 2021").
- valid_from / valid_to: when the fact started and stopped holding, as ISO dates only as
  precise as the text ("2015", "2015-03", "2015-03-04"); null when the text does not say.
  "since March 2015" -> valid_from "2015-03"; "from 2015 to 2022" -> "2015" and "2022";
  "until 2019" -> valid_to "2019"; "re-elected in 2026" -> valid_from "2026". Never guess.

Extract only what the text states. Do not invent entities, facts or dates."""

_SUMMARY_RULES = """\
Summarize the text.
- summary: two to four sentences that keep the key names, numbers and dates.
- description: one short line (under 100 characters) saying what the text is about."""

_GRAPH_SHAPE = (
    '{"nodes": [{"id": "n1", "name": "...", "type": "person", "description": "..."}], '
    '"edges": [{"source_node_id": "n1", "target_node_id": "n2", '
    '"relationship_name": "ceo_of", "description": "...", "valid_from": "2021-03", "valid_to": null}]}'
)
_SUMMARY_SHAPE = '{"summary": "...", "description": "..."}'


def _user(text: str) -> str:
    return f"<TEXT>\n{text}\n</TEXT>"


def extract_chunk(text: str) -> Messages:
    """One call per chunk: graph and summary together. Answer: ChunkExtraction."""
    system = (
        "You are an information extraction system that turns text into a knowledge graph "
        "and a summary.\n\n"
        f"{_GRAPH_RULES}\n\n{_SUMMARY_RULES}\n\n"
        f'Answer with JSON only, shaped as {{"graph": {_GRAPH_SHAPE}, "summary": {_SUMMARY_SHAPE}}}.'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": _user(text)}]


def extract_graph(text: str) -> Messages:
    """Graph only (two-call mode). Answer: KnowledgeGraph."""
    system = (
        "You are an information extraction system that turns text into a knowledge graph.\n\n"
        f"{_GRAPH_RULES}\n\nAnswer with JSON only, shaped as {_GRAPH_SHAPE}."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": _user(text)}]


def summarize(text: str) -> Messages:
    """Summary only (two-call mode). Answer: SummarizedContent."""
    system = (
        "You summarize text for a memory system.\n\n"
        f"{_SUMMARY_RULES}\n\nAnswer with JSON only, shaped as {_SUMMARY_SHAPE}."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": _user(text)}]

