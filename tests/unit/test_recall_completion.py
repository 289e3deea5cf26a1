import uuid

from engram.models.payloads import Provenance, RecallItem
from engram.pipelines.recall.completion import MAX_CONTEXT_CHARS, answer_item, render_context, render_line
from engram.prompts.recall import answer_prompt, split_reasoning


def _item(kind="triplet", text="Alice Moreau ceo of Acme", **kw):
    return RecallItem(kind=kind, text=text, score=0.5, **kw)


def test_a_superseded_fact_is_marked_for_the_model():
    assert render_line(1, _item(superseded=True)) == "[1] (fact) Alice Moreau ceo of Acme — SUPERSEDED (no longer current)"


def test_a_conflicting_fact_carries_the_other_fact_and_the_reason():
    line = render_line(2, _item(conflicts=[{"fact": "Bob ceo of Acme", "reason": "one CEO", "confidence": 0.9}]))
    assert line == '[2] (fact) Alice Moreau ceo of Acme — CONFLICT: memory also says "Bob ceo of Acme" (one CEO; confidence 0.90)'


def test_passages_show_their_document_and_long_text_is_cut():
    item = _item("chunk", "word " * 1000, provenance=Provenance(title="doc.md"))
    line = render_line(3, item)
    assert line.startswith("[3] (passage · doc.md) word word") and line.endswith(" …")
    assert len(line) < 1600


def test_context_stops_before_its_character_budget():
    items = [_item("chunk", "x" * 1400) for _ in range(30)]
    context = render_context(items)
    assert len(context) <= MAX_CONTEXT_CHARS and context.count("\n") + 1 < 30


def test_the_answer_carries_the_provenance_of_its_context_once():
    c1, c2, e1 = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    items = [_item("chunk", "a", provenance=Provenance(dataset="d", chunk_ids=[c1])),
             _item(provenance=Provenance(dataset="d", chunk_ids=[c1, c2], edge_ids=[e1]))]
    answer = answer_item(" Acme is run by Bob. ", items)
    assert (answer.kind, answer.text, answer.score) == ("answer", "Acme is run by Bob.", 1.0)
    assert answer.provenance.chunk_ids == [c1, c2] and answer.provenance.edge_ids == [e1]
    assert answer.provenance.dataset == "d"
    mixed = answer_item("x", items + [_item(provenance=Provenance(dataset="other"))])
    assert mixed.provenance.dataset is None


def test_prompts_put_question_and_context_verbatim_and_tell_how_to_treat_conflicts():
    [system, user] = answer_prompt("Who runs Acme?", "[1] (fact) X", "graph")
    assert "CONFLICT" in system["content"] and "SUPERSEDED" in system["content"]
    assert user["content"].endswith("[1] (fact) X\n\nQuestion: Who runs Acme?")


def test_split_reasoning_takes_the_last_answer_line():
    assert split_reasoning("step one\nstep two\nAnswer: Bob") == ("Bob", "step one\nstep two")
    assert split_reasoning("just Bob") == ("just Bob", None)
    assert split_reasoning("thinking... Answer:   ") == ("thinking... Answer:", None)
