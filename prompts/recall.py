"""Recall completion prompts: each function returns litellm messages for a plain-text answer
(response model "text" in a replay cassette). The question and the rendered context are
placed verbatim in the user message, so cassettes can match on them.
"""

from __future__ import annotations

Messages = list[dict[str, str]]

_RULES = """\
You answer a question from an AI agent's memory.
- Use only the memory context given; if it does not hold the answer, say you do not know.
- Context lines are numbered; cite the lines you used like [2].
- A fact marked SUPERSEDED is no longer current: use it only for questions about the past.
- A fact marked CONFLICT is disputed by another fact in memory: say that memory holds
  conflicting facts, give both with the stated reason, and do not silently pick one."""

def answer_prompt(question: str, context: str, style: str = "", note: str | None = None) -> Messages:
    """Answer `question` from `context`; `style` says what the context is (each search type's, in
    pipelines/recall/registry.py); `note` adds one line of instructions."""
    system = f"{_RULES}\n{style}" if style else _RULES
    if note:
        system += f"\n{note}"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Memory context:\n{context or '(nothing found)'}\n\nQuestion: {question}"},
    ]


def followup_prompt(question: str, context: str) -> Messages:
    """Chain of thought, first step: which follow-up question would fill the gap."""
    return [
        {"role": "system", "content": (
            "You plan a second memory lookup. Read the question and what memory returned so far. "
            "Propose ONE follow-up question whose answer is missing from the context and needed to "
            "answer the question. Reply with the follow-up question only, on one line.")},
        {"role": "user", "content": f"Memory context:\n{context or '(nothing found)'}\n\nQuestion: {question}\n\n"
                                    "Follow-up question:"},
    ]


def split_reasoning(text: str) -> tuple[str, str | None]:
    """(final answer, reasoning) of a chain-of-thought reply; no 'Answer:' line → all answer."""
    head, marker, tail = text.rpartition("Answer:")
    if not marker or not tail.strip():
        return text.strip(), None
    return tail.strip(), head.strip() or None
