"""The `engram` commands that manage memory, as a user runs them: a real CLI process talking to
a real worker. Each friction a newcomer met (issue 34) has its test here: a missing path or an
empty argument remembered as text, shortened run ids refused, no forget / datasets / retry,
an eval of a missing dataset exiting 0, raw validation messages and tracebacks."""

from __future__ import annotations

import json
import os
import re
import time
import uuid

import pytest
from cli_helpers import engram, one_line_error

from engram.tasks.client import RunHandle


def cli(worker, *args, **kw):
    return engram(worker.redis_url, *args, **kw)


def ok(out) -> str:
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _exists(store, dataset: str, user: str = "default") -> bool:
    with store.unit_of_work() as uow:
        return uow.access.find_dataset(dataset, user) is not None


def _runs(worker, dataset: str) -> list[dict]:
    return json.loads(ok(cli(worker, "status", "-d", dataset, "--json")))["runs"]


@pytest.fixture(scope="module")
def kb(worker):
    name = f"cli-kb-{uuid.uuid4().hex[:8]}"
    done = worker.client.remember(dataset=name, items=[{"text": "The Corran Lighthouse was built in 1871.",
                                                         "name": "lighthouse.md"},
                                                        {"text": "The Tessel Bridge opened in 2008.",
                                                         "name": "bridge.md"}], background=False, timeout=300)
    assert [s.status for s in done] == ["completed", "completed"]
    return name


def test_remember_refuses_a_missing_path_an_empty_argument_and_nothing(worker, store, dataset_name, tmp_path):
    (tmp_path / "private.txt").write_text("not meant for memory")  # what `remember ""` walked
    for args in (["docs/onbording.md"], [""], []):
        line = one_line_error(cli(worker, "remember", *args, "-d", dataset_name, cwd=tmp_path))
        assert "--text" in line
    assert "no such file or directory: docs/onbording.md" in one_line_error(
        cli(worker, "remember", "docs/onbording.md", "-d", dataset_name, cwd=tmp_path))
    assert not _exists(store, dataset_name)  # nothing written, not even the dataset


def test_remember_files_text_and_stdin(worker, dataset_name, tmp_path):
    doc = tmp_path / "harbor.md"
    doc.write_text("Alice Moreau is the CEO of Harbor Dynamics.")
    out = ok(cli(worker, "remember", str(doc), "--text", "Kestrel Foods is located in Port Alder.",
                 "-d", dataset_name, "--wait"))
    assert "accepted 2 item(s)" in out
    assert "accepted 1 item(s)" in ok(cli(worker, "remember", "-", "-d", dataset_name,
                                          input="Brightwater Ferries runs the ferry to Corran Island."))
    runs = _runs(worker, dataset_name)
    assert len(runs) == 3 and {r["status"] for r in runs[1:]} == {"completed"}


def test_status_accepts_the_shortened_run_ids_it_shows(worker, kb):
    runs = _runs(worker, kb)
    table = ok(cli(worker, "status", "-d", kb))
    shown = re.findall(r"^│ ([0-9a-f]{8}) ", table, re.M)  # the ids as the table shows them
    assert sorted(shown) == sorted(r["run_id"][:8] for r in runs)
    for short in shown:
        [run] = json.loads(ok(cli(worker, "status", short, "--json")))
        assert run["run_id"].startswith(short) and run["status"] == "completed"
    assert re.search(rf"^│ {shown[0]} +│ completed", ok(cli(worker, "status", shown[0][:6])), re.M)
    assert "no run starts with" in one_line_error(cli(worker, "status", shown[0], "--user", "mallory"))


def test_status_needs_a_run_or_a_dataset_and_says_so_in_one_line(worker):
    assert "--dataset" in one_line_error(cli(worker, "status"))
    assert "engram status -d" in one_line_error(cli(worker, "status", "00000000"))
    assert "not a run id" in one_line_error(cli(worker, "status", "not-hex!"))
    assert "engram datasets" in one_line_error(cli(worker, "status", "-d", f"missing-{uuid.uuid4().hex[:6]}"))


def _listed(worker, user: str) -> dict:
    return {d["name"]: d for d in json.loads(ok(cli(worker, "datasets", "--user", user, "--json")))["datasets"]}


def test_datasets_lists_owner_grants_counts_and_runs_and_share_unshare_change_them(worker, kb):
    reader = f"reader-{uuid.uuid4().hex[:6]}"
    assert kb not in _listed(worker, reader)
    assert f"{reader} on {kb}: read" in ok(cli(worker, "share", kb, reader))
    mine = _listed(worker, "default")[kb]
    assert mine["owner"] == "default" and mine["permissions"] == ["read", "write", "delete", "share"]
    assert mine["grants"] == {"default": ["read", "write", "delete", "share"], reader: ["read"]}
    assert mine["counts"]["data_items"] == 2 and mine["counts"]["chunks"] >= 2 and mine["counts"]["entities"] > 0
    assert mine["runs"] == {"completed": 2}
    theirs = _listed(worker, reader)[kb]
    assert theirs["owner"] == "default" and theirs["permissions"] == ["read"]
    assert theirs["grants"] is None  # a reader does not learn who else reads
    [row] = [line for line in ok(cli(worker, "datasets")).splitlines() if f" {kb} " in line]
    assert "default" in row and f"{reader}: read" in row and "2 completed" in row
    assert f"{reader} on {kb}: no grants" in ok(cli(worker, "unshare", kb, reader))
    assert kb not in _listed(worker, reader)


def test_forget_a_document_by_name_an_item_by_a_shortened_id_then_the_dataset(worker, store, dataset_name):
    worker.client.remember(dataset=dataset_name, items=[{"text": f"Note {n}: the {n} ferry leaves at noon.",
                                                          "name": f"{n}.md"} for n in ("a", "b", "c")],
                           background=False, timeout=300)
    forget = ("forget", "-d", dataset_name)
    assert "--yes" in one_line_error(cli(worker, *forget, "--document", "a.md"))  # no terminal to confirm on
    assert "exactly one of" in one_line_error(cli(worker, *forget))
    assert "no document 'z.md'" in one_line_error(cli(worker, *forget, "--document", "z.md", "--yes"))
    assert _listed(worker, "default")[dataset_name]["counts"]["data_items"] == 3  # nothing forgotten yet
    assert "forgotten: 1 items" in ok(cli(worker, *forget, "--document", "a.md", "--yes"))
    item = next(r["data_item_id"] for r in _runs(worker, dataset_name) if r["status"] == "completed")
    assert "forgotten: 1 items" in ok(cli(worker, *forget, "--item", item[:8], "--yes"))
    assert _listed(worker, "default")[dataset_name]["counts"]["data_items"] == 1
    intruder = f"intruder-{uuid.uuid4().hex[:6]}"
    assert "engram datasets" in one_line_error(cli(worker, *forget, "--all", "--yes", "--user", intruder))
    ok(cli(worker, "share", dataset_name, intruder))  # read only
    line = one_line_error(cli(worker, *forget, "--all", "--yes", "--user", intruder))
    assert f"engram share {dataset_name} {intruder} -p delete" in line
    assert "forgotten: 1 items" in ok(cli(worker, *forget, "--all", "--yes"))
    assert _listed(worker, "default")[dataset_name]["counts"]["chunks"] == 0


def _cassette(path, entries: list[dict]) -> None:
    path.write_text(json.dumps({"version": 1, "entries": entries}))
    stamp = time.time() + 1  # workers re-read on an mtime change: make a rewrite within a second seen
    os.utime(path, (stamp, stamp))


def test_retry_resumes_a_failed_run_given_by_a_shortened_id(worker_factory, dataset_name, tmp_path):
    cassette = tmp_path / "llm.json"
    _cassette(cassette, [{"contains": "", "response_model": "ChunkExtraction", "response": "this is { not json"}])
    w = worker_factory({"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_LLM_MAX_REASKS": "0"})
    [failed] = w.client.remember("Kestrel Foods is located in Port Alder.", dataset=dataset_name,
                                 background=False, timeout=120)
    assert failed.status == "failed"
    short = str(failed.run_id)[:8]
    assert "no run starts with" in one_line_error(cli(w, "retry", short, "--user", "mallory"))
    _cassette(cassette, [{"contains": "Kestrel", "response_model": "ChunkExtraction", "response": {
        "graph": {"nodes": [{"id": "a", "name": "Kestrel Foods", "type": "organization", "description": "a firm"}],
                  "edges": []},
        "summary": {"summary": "About Kestrel Foods.", "description": "summary"}}}])
    out = ok(cli(w, "retry", short, "--wait"))
    assert f"run {failed.run_id}: resumed at extract_graph_and_summarize" in out
    assert f"run {failed.run_id}: completed" in out
    assert RunHandle(w.client, failed.run_id).status().status == "completed"
    assert "already completed" in ok(cli(w, "retry", short))


def test_capture_waits_for_the_pipeline_and_refuses_a_malformed_field(worker, dataset_name):
    out = ok(cli(worker, "capture", "Use Redis streams for the outbox", "-d", dataset_name, "--type", "decision",
                 "--content", "We chose Redis streams over RabbitMQ for the outbox.", "--tag", "infra"))
    assert re.match(r"captured [0-9a-f-]{36}: complete", out), out
    line = one_line_error(cli(worker, "capture", "x", "-d", dataset_name, "--template", "decision", "--field", "oops"))
    assert "name=value" in line


def test_eval_of_a_missing_dataset_is_one_line_and_exit_1(worker):
    line = one_line_error(cli(worker, "eval", "-d", f"missing-{uuid.uuid4().hex[:6]}"))
    assert "does not exist" in line and "engram datasets" in line


def test_an_unexpected_error_is_one_line_with_a_fix_and_debug_shows_the_traceback(worker):
    down = {"ENGRAM_DATABASE_URL": "postgresql://engram@127.0.0.1:9/engram"}  # nothing listens on port 9
    line = one_line_error(cli(worker, "status", "-d", "anything", env=down))
    assert "cannot reach PostgreSQL" in line and "engram doctor" in line
    out = cli(worker, "--debug", "status", "-d", "anything", env=down)
    assert out.returncode == 1 and "Traceback" in out.stdout + out.stderr
