"""distill_sessions against real workers, Postgres and Redis, the LLM answered by a replay
cassette: every outcome, the watermark on a failed call, exactly-once publication on retry,
recall of a published lesson with its provenance, and the offline default."""

from __future__ import annotations

import io
import json
import time
import uuid

import pytest
from improve_helpers import dataset_id, rows, runs, scalar, settled, stages, wait_until
from rich.console import Console

from engram.cli.sessions import render_learning
from engram.pipelines.improve import distill

EXTRACTION = {"graph": {"nodes": [], "edges": []}, "summary": {"summary": "A note.", "description": "note"}}


class Cassette:
    """A replay cassette the test edits while the fleet runs (the provider re-reads it)."""

    def __init__(self, path):
        self.path, self.entries = path, []
        self._write()

    def add(self, *entries: dict) -> None:
        self.entries[:0] = entries  # newest first: a test can override an earlier answer
        self._write()

    def _write(self) -> None:
        fallback = {"contains": "", "response_model": "ChunkExtraction", "response": EXTRACTION}
        self.path.write_text(json.dumps({"version": 1, "entries": [*self.entries, fallback]}))
        time.sleep(0.01)  # a distinct mtime for the next edit


@pytest.fixture(scope="module")
def fleet(spawn_worker, tmp_path_factory):
    path = tmp_path_factory.mktemp("cassette") / "distill.json"
    cassette = Cassette(path)
    handle = spawn_worker({"ENGRAM_LLM_MODEL": f"replay:{path}", "ENGRAM_IMPROVE_AUTOMATIC": "false",
                           "ENGRAM_IMPROVE_OPT_IN_STAGES": "build_truth_subspace"}, concurrency=3, name="distill")
    handle.cassette = cassette
    yield handle
    handle.stop()


def _turn(fleet, dataset: str, session: str, question: str, answer: str) -> str:
    stored = fleet.client.remember_turn(dataset=dataset, session_id=session, question=question, answer=answer)
    assert stored.improve == "disabled"
    return str(stored.entry_id)


def _improve(fleet, store, dataset: str, session: str) -> dict:
    """An explicit improve of the session; the distill_sessions row of its run."""
    before = len(runs(store, dataset, session))
    started = fleet.client.improve(dataset, session_ids=[session])
    assert started.status == "started", started
    wait_until(lambda: len(runs(store, dataset, session)) > before and settled(store, dataset),
               what=f"improve of {dataset}/{session}")
    run = runs(store, dataset, session)[before]  # the first pass (later ones may follow for new work)
    return stages(store, run["id"])["distill_sessions"] | {"run_status": run["status"]}


def _curator(marker: str, *lessons: tuple[str, list[str]]) -> dict:
    return {"contains": marker, "response_model": "ProposedLessonList",
            "response": {"lessons": [{"working_statement": w, "member_entry_ids": m} for w, m in lessons]}}


def _writer(marker: str, **answer) -> dict:
    return {"contains": marker, "response_model": "WrittenLesson", "response": answer}


def _distill_mark(store, dataset: str, session: str) -> int:
    return scalar(store, "SELECT s.distill_watermark_seq FROM session_improve_state s JOIN datasets d"
                  " ON d.id = s.dataset_id WHERE d.name = :n AND s.session_id = :s", n=dataset, s=session)


def test_no_gated_entries(fleet, store, dataset_name):
    entry = _turn(fleet, dataset_name, "g", "Was that right? GATEQ", "No idea.")
    fleet.client.feedback(entry, "harmful")
    row = _improve(fleet, store, dataset_name, "g")
    assert (row["status"], row["reason"]) == ("skipped", "no_gated_entries")
    assert row["run_status"] == "completed"


def test_no_proposed_lessons_advances_the_distillation_watermark(fleet, store, dataset_name):
    fleet.cassette.add(_curator("CHITCHATQ"))
    _turn(fleet, dataset_name, "c", "Hello there CHITCHATQ", "Hi!")
    row = _improve(fleet, store, dataset_name, "c")
    assert (row["status"], row["reason"]) == ("completed", "no_proposed_lessons")
    assert row["counts"]["calls"] == 1 and _distill_mark(store, dataset_name, "c") >= 1


def test_rejected_decisions_are_kept_with_their_reason_and_shown(fleet, store, dataset_name):
    entry = _turn(fleet, dataset_name, "v", "I am on vacation next week VACATIONQ", "Enjoy!")
    fleet.cassette.add(_curator("VACATIONQ", ("WS-VACATION the user is on vacation next week", [entry])),
                       _writer("WS-VACATION", accept=False, reason="not_durable"))
    row = _improve(fleet, store, dataset_name, "v")
    assert (row["status"], row["reason"]) == ("completed", "no_accepted_lessons")
    (session,) = fleet.client.sessions(dataset_name, session_id="v")["sessions"]
    (decision,) = session["decisions"]
    assert (decision["accepted"], decision["reason"], decision["entry_ids"]) == (False, "not_durable", [entry])
    assert session["lessons"] == [] and session["distill_watermark_seq"] == session["max_seq"]
    out = io.StringIO()
    render_learning(Console(file=out, width=200), {"sessions": [session]})
    assert "rejected: not_durable" in out.getvalue() and "WS-VACATION" in out.getvalue()


def test_published_lesson_is_recalled_by_node_set_with_its_provenance(fleet, store, dataset_name):
    q1 = _turn(fleet, dataset_name, "d", "How do we ship to production? DEPLOYQ", "Ask the ops team to sign off.")
    q2 = _turn(fleet, dataset_name, "d", "Even for hotfixes? DEPLOYQ", "Yes, ops signs off every deploy in writing.")
    statement = "Production deploys need the ops team's written sign-off, hotfixes included."
    fleet.cassette.add(_curator("DEPLOYQ", ("WS-DEPLOY deploys need ops sign-off", [q1, q2, "not-an-entry"])),
                       _writer("WS-DEPLOY", accept=True, statement=statement, entities=["ops team"],
                               why_learned="the user confirmed it for hotfixes too."))
    row = _improve(fleet, store, dataset_name, "d")
    assert (row["status"], row["reason"], row["run_status"]) == ("completed", None, "completed")
    assert row["counts"]["published"] == 1 and row["counts"]["max_in_flight"] <= distill.MAX_IN_FLIGHT
    ds = dataset_id(store, dataset_name)
    (item,) = rows(store, "SELECT * FROM data_items WHERE dataset_id = :d AND 'session_learnings' = ANY(node_sets)",
                   d=ds)
    assert item["content"] == ("# Session learning (session d)\n\n" + statement
                               + " (the user confirmed it for hotfixes too.)\n")
    assert item["node_sets"] == ["session_learnings", "session_learnings:d"]
    wait_until(lambda: scalar(store, "SELECT status FROM pipeline_runs WHERE data_item_id = :i", i=item["id"])
               == "completed", what="the lesson cognified")
    result = fleet.client.recall("Who signs off production deploys?", datasets=[dataset_name], search_type="CHUNKS",
                                 node_sets=["session_learnings:d"])
    assert [i.provenance.data_item_id for i in result.items] == [item["id"]]
    lesson = result.items[0].provenance.lesson
    assert lesson.session_id == "d" and lesson.entry_ids == [q1, q2] and statement in result.items[0].text
    truth_row = stages(store, runs(store, dataset_name, "d")[-1]["id"])["build_truth_subspace"]
    assert truth_row["status"] == "completed" and truth_row["counts"]["learnings"] == 1


def test_failed_writer_keeps_the_watermark_and_a_retry_publishes_each_lesson_once(fleet, store, dataset_name):
    a = _turn(fleet, dataset_name, "f", "Where do logs go? RETRYQ", "To the Loki cluster.")
    b = _turn(fleet, dataset_name, "f", "And metrics? RETRYQ", "Prometheus, scraped every 15 s.")
    fleet.cassette.add(
        _curator("RETRYQ", ("WS-ALPHA logs go to Loki", [a]), ("WS-BETA metrics go to Prometheus", [b])),
        _writer("WS-ALPHA", accept=True, statement="Service logs are shipped to the Loki cluster.", why_learned="ops"),
        {"contains": "WS-BETA", "response_model": "WrittenLesson", "error": "timeout"})
    row = _improve(fleet, store, dataset_name, "f")
    assert (row["status"], row["reason"]) == ("failed", "distillation_calls_failed")
    assert "1 writer calls failed" in row["error"] and row["run_status"] == "completed_with_errors"
    assert _distill_mark(store, dataset_name, "f") == 0  # the entries stay eligible
    ds = dataset_id(store, dataset_name)
    assert scalar(store, "SELECT count(*) FROM lessons WHERE dataset_id = :d", d=ds) == 1  # the survivor

    fleet.cassette.add(_writer("WS-BETA", accept=True, statement="Metrics are scraped by Prometheus every 15 s.",
                               why_learned="ops"))
    row = _improve(fleet, store, dataset_name, "f")
    assert (row["status"], row["reason"]) == ("completed", None) and row["counts"]["published"] == 1
    statements = rows(store, "SELECT l.statement, count(i.id) AS items FROM lessons l JOIN data_items i"
                      " ON i.id = l.data_item_id WHERE l.dataset_id = :d GROUP BY l.statement ORDER BY 1", d=ds)
    assert [(r["statement"], r["items"]) for r in statements] == [
        ("Metrics are scraped by Prometheus every 15 s.", 1), ("Service logs are shipped to the Loki cluster.", 1)]
    assert scalar(store, "SELECT count(*) FROM data_items WHERE dataset_id = :d AND"
                  " 'session_learnings' = ANY(node_sets)", d=ds) == 2
    assert _distill_mark(store, dataset_name, "f") == scalar(
        store, "SELECT max(seq) FROM session_entries WHERE dataset_id = :d AND session_id = 'f'", d=ds)


def test_offline_default_records_llm_required_and_the_run_completes(client, store):
    name = f"off-{uuid.uuid4().hex[:8]}"
    client.remember_turn(dataset=name, session_id="o", question="Deploys need ops sign-off?", answer="Yes.")
    wait_until(lambda: runs(store, name, "o") and settled(store, name), what="offline improve")
    run = runs(store, name, "o")[-1]
    row = stages(store, run["id"])["distill_sessions"]
    assert (row["status"], row["reason"], run["status"]) == ("skipped", "llm_required", "completed")


def test_beat_truth_sweep_builds_per_dataset_only_when_lessons_changed(fleet, store, dataset_name):
    entry = _turn(fleet, dataset_name, "t", "Which region do we deploy to? REGIONQ", "eu-west-1, always.")
    fleet.cassette.add(_curator("REGIONQ", ("WS-REGION deploy to eu-west-1", [entry])),
                       _writer("WS-REGION", accept=True, statement="Deploys go to the eu-west-1 region.",
                               why_learned="the user said always"))
    _improve(fleet, store, dataset_name, "t")
    ds = dataset_id(store, dataset_name)
    wait_until(lambda: not scalar(store, "SELECT count(*) FROM pipeline_runs WHERE dataset_id = :d"
                                  " AND pipeline = 'cognify' AND status <> 'completed'", d=ds) and settled(store, dataset_name),
               what="lesson cognified")
    # New chunks the live basis has not stamped: the sweep's work.
    fleet.client.remember("Release trains leave from eu-west-1 on Tuesdays.", dataset=dataset_name, background=False)
    swept = fleet.app.send_task("engram.improve.sweep_truth").get(timeout=60)
    assert str(ds) in swept["started"]
    wait_until(lambda: any(r["trigger"] == "beat" for r in runs(store, dataset_name)) and settled(store, dataset_name),
               what="beat truth run")
    beat_run = [r for r in runs(store, dataset_name) if r["trigger"] == "beat"][-1]
    assert stages(store, beat_run["id"])["build_truth_subspace"]["status"] == "completed"
    basis = rows(store, "SELECT epoch, signature FROM truth_bases WHERE dataset_id = :d", d=ds)[0]
    assert scalar(store, "SELECT count(*) FROM chunks WHERE dataset_id = :d AND (truth_epoch IS DISTINCT FROM :e"
                  " OR truth_signature IS DISTINCT FROM :s)", d=ds, e=basis["epoch"], s=basis["signature"]) == 0
    again = fleet.app.send_task("engram.improve.sweep_truth").get(timeout=60)
    assert str(ds) not in again["started"]  # nothing changed: nothing to build


def test_forgetting_a_lesson_document_leaves_no_copy_of_the_lesson(fleet, store, dataset_name):
    from engram.tests.integration.test_forget import copies

    entry = _turn(fleet, dataset_name, "x", "Which tool formats code? FORMATQ", "We use the formatter.")
    fleet.cassette.add(_curator("FORMATQ", ("WS-FORMAT code formatting tool", [entry])),
                       _writer("WS-FORMAT", accept=True, statement="Code is formatted with Xylocarpia before review.",
                               why_learned="the user named it"))
    _improve(fleet, store, dataset_name, "x")
    ds = dataset_id(store, dataset_name)
    item = scalar(store, "SELECT data_item_id FROM lessons WHERE dataset_id = :d", d=ds)
    wait_until(lambda: scalar(store, "SELECT status FROM pipeline_runs WHERE data_item_id = :i", i=item)
               == "completed", what="lesson cognified")
    assert {"lessons.statement", "lesson_decisions.statement", "data_items.content"} <= set(copies(store, ("xylocarpia",)))
    fleet.client.forget(dataset_name, data_item_id=item)
    assert copies(store, ("xylocarpia",)) == []
    assert fleet.client.sessions(dataset_name, session_id="x")["sessions"][0]["lessons"] == []
