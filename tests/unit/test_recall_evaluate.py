import pytest

from engram.models.payloads import Provenance, RecallItem, RecallResult
from engram.pipelines.recall.evaluate import BadQAFile, evaluate, load_qa


def _result(texts, answer=None):
    items = ([RecallItem(kind="answer", text=answer, score=1.0)] if answer else []) + [
        RecallItem(kind="chunk", text=t, score=0.5, provenance=Provenance(title=f"d{n}")) for n, t in enumerate(texts)]
    return RecallResult(question="q", search_type="CHUNKS", items=items, generated=answer is not None)


def test_load_qa_reads_json_lines_and_names_the_bad_line():
    assert load_qa(['{"question": "q", "answer": "a"}', "", '{"question": "r", "answer": 3}'])[1]["answer"] == 3
    with pytest.raises(BadQAFile, match="line 2: not JSON"):
        load_qa(['{"question": "q", "answer": "a"}', "{oops"])
    with pytest.raises(BadQAFile, match="line 1: expected"):
        load_qa(['{"question": "q"}'])
    with pytest.raises(BadQAFile, match="no questions"):
        load_qa(["", "  "])


def test_without_an_answer_the_top_context_is_scored_and_context_at_k_counts():
    qa = [{"question": "who", "answer": "Edith Marr"}, {"question": "when", "answer": "2008"}]
    answers = {"who": _result(["The keeper was Edith Marr.", "x"]), "when": _result(["nothing", "opened in 2008"])}
    report = evaluate(qa, answers.__getitem__, k=1)
    assert report["metrics"]["answer_in_context@1"] == 0.5
    assert report["metrics"]["exact_match"] == 0.0 and 0 < report["questions"][0]["f1"] < 1
    assert report["questions"][0]["prediction"] == "The keeper was Edith Marr."
    assert evaluate(qa, answers.__getitem__, k=2)["metrics"]["answer_in_context@2"] == 1.0


def test_a_generated_answer_is_what_em_and_f1_score():
    report = evaluate([{"question": "who", "answer": "Edith Marr"}],
                      lambda q: _result(["The keeper was Edith Marr."], answer="Edith Marr"), k=1)
    assert report["metrics"]["exact_match"] == 1.0 and report["metrics"]["f1"] == 1.0
    assert report["metrics"]["generated"] == 1


def test_a_failing_question_scores_zero_and_keeps_its_error():
    def recall(question):
        raise RuntimeError("dataset gone")

    report = evaluate([{"question": "q", "answer": "a"}], recall, k=3)
    assert report["metrics"]["errors"] == 1 and report["questions"][0]["error"] == "RuntimeError: dataset gone"
    assert report["metrics"]["answer_in_context@3"] == 0.0
