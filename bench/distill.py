"""Distillation benchmark: 1,000 session entries through distill_sessions on real workers.

    python bench/distill.py                           # 1,000 entries, zero LLM latency
    python bench/distill.py --llm-latency 0.2         # simulated provider latency L per call

The entries are stored as one session whose QA was persisted before (its QA watermark is at
the top), so the improve run's work is the distillation: curator batches as a group of ≤5
lanes, a writer call per proposal as a chord, publication through the cognify chain. Every
curator and writer answer comes from a replay cassette (one distinct lesson per batch).
Figures: wall of the stage and of the run, calls, lessons, the most calls in flight (≤ 5),
and, same run, the floor: the same calls made one lane after another in this process
(no Celery, no store) and the ideal calls·L/5. JSON goes to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_cassette(path: Path, batches: list, latency: float) -> None:
    """Per batch: one proposal naming its first entry's topic; per proposal: an accepted lesson."""
    entries = []
    for b in batches:
        topic = b.timeline.split("topic-", 1)[1].split(" ", 1)[0]
        ws = f"WS-{topic} the team relies on practice {topic}"
        entries.append({"contains": f"practice topic-{topic} ", "response_model": "ProposedLessonList",
                         "response": {"lessons": [{"working_statement": ws, "member_entry_ids": list(b.entry_ids[:2])}]}})
        entries.append({"contains": f"WS-{topic} ", "response_model": "WrittenLesson", "response": {
            "accept": True, "statement": f"The team relies on practice {topic} in every release.",
            "entities": [], "why_learned": "the user confirmed it"}})
    for e in entries:
        if latency:
            e["delay_seconds"] = latency
    entries.append({"contains": "", "response_model": "ChunkExtraction", "response": {
        "graph": {"nodes": [], "edges": []}, "summary": {"summary": "A session learning.", "description": "lesson"}}})
    path.write_text(json.dumps({"version": 1, "entries": entries}))


def store_entries(n: int, dataset: str, session: str, tag: str) -> uuid.UUID:
    from sqlalchemy import text

    from engram.adapters.store import Store

    with Store().unit_of_work() as uow:
        ds = uow.access.create_dataset("bench", dataset)
        user = uow.access.ensure_user("bench")
        for i in range(n):
            uow.sessions.add_entry(dataset_id=ds, session_id=session, user_id=user, confidence=0.9,
                                   question=f"How do we handle practice topic-{i} in run {tag}?",
                                   answer=f"We always apply practice {i} before a release.")
        uow.improve.ensure_sessions(ds, [session])
        # QA persisted earlier: the run's work is the distillation alone.
        uow.conn.execute(text("UPDATE session_improve_state SET watermark_seq = (SELECT max(seq) FROM session_entries"
                              " WHERE dataset_id = :d AND session_id = :s) WHERE dataset_id = :d AND session_id = :s"),
                         {"d": ds, "s": session})
    return ds


def run_fleet(app, store, dataset: str, ds, session: str, timeout: float = 3600) -> dict:
    from engram.pipelines.improve.flow import DISTILL_SESSIONS
    from engram.tasks.client import EngramClient

    client = EngramClient(app, timeout=300)
    started = time.perf_counter()
    result = client.improve(dataset, user="bench", session_ids=[session])
    assert result.status == "started", result
    deadline = time.monotonic() + timeout
    while True:
        with store.unit_of_work() as uow:
            run = uow.runs.flow_run(result.run_id, "improve")
        if run["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    run_wall = time.perf_counter() - started
    with store.unit_of_work() as uow:
        stage = {s["stage"]: s for s in uow.runs.stages(result.run_id)}[DISTILL_SESSIONS.name]
        lessons = len(uow.learning.lessons_of(ds, session, limit=100000))
    while True:  # the lessons' cognify runs, started after publication
        with store.unit_of_work() as uow:
            pending = uow.conn.exec_driver_sql(
                "SELECT count(*) FROM pipeline_runs WHERE dataset_id = %s AND pipeline = 'cognify'"
                " AND status <> 'completed'", (ds,)).scalar()
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    c = stage["output"] or {}
    return {"status": run["status"], "stage_status": stage["status"], "stage_reason": stage["reason"],
            "stage_wall_s": (stage["finished_at"] - stage["started_at"]).total_seconds(), "run_wall_s": run_wall,
            "cognified_wall_s": time.perf_counter() - started, "calls": c.get("calls"),
            "max_in_flight": c.get("max_in_flight"), "proposals": c.get("proposals"), "lessons": lessons}


def run_floor(entries: list[dict], cassette: Path, settings) -> dict:
    """The same curator and writer calls and the same embeddings, one lane, in this process:
    no Celery, no store (similar-lesson and glossary lookups answer nothing)."""
    from engram.adapters.embed import get_embedder
    from engram.adapters.llm.gateway import LLMGateway
    from engram.adapters.llm.providers import ReplayProvider
    from engram.pipelines.improve import distill as d
    from engram.pipelines.improve import distill_run as dr

    gateway, embedder = LLMGateway(ReplayProvider(cassette)), get_embedder(settings)
    embedder.embed(["warm up"])
    by_id = {str(e["id"]): e for e in entries}
    started = time.perf_counter()
    gated = d.gate(entries, 0)
    sessions = {"floor": {"gated": len(gated)}}
    curated = dr.curate_lane(dr.plan_batches({"floor": {"entries": gated}}), gateway.structured, time.time)
    items = dr.writer_inputs(dr.merge_lanes([curated], sessions), embedder.embed, lambda v, k: [], lambda v, k: [],
                             lambda ids: [by_id[i] for i in ids if i in by_id])
    written = dr.write_lane(items, gateway.structured, time.time)
    decisions = dr.decisions_by_session([written], sessions)["floor"]
    pubs = d.publications(uuid.uuid4(), "floor", decisions)
    embedder.embed([p.statement for p in pubs])
    return {"wall_s": time.perf_counter() - started, "lessons": len(pubs),
            "calls": len(curated["calls"]) + len(written["calls"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes for the other queues")
    parser.add_argument("--llm-threads", type=int, default=8, help="thread-pool worker serving the llm queue")
    parser.add_argument("--llm-latency", type=float, default=0.0, help="simulated seconds per LLM call")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()

    os.environ.setdefault("ENGRAM_STATE_DIR", str(Path("~/.engram-bench").expanduser()))
    from engram.cli.app import prepare_services
    from engram.cli.demo import start_worker, stop_worker, wait_for_worker
    from engram.pipelines.improve import distill as d
    from engram.settings import get_settings, reset_settings

    prepare_services()
    reset_settings()
    settings = get_settings()
    args.out.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:6]
    dataset, session = f"bench-distill-{tag}", "bench"
    ds = store_entries(args.entries, dataset, session, tag)
    warm_ds = store_entries(12, f"{dataset}-warmup", session, f"{tag}w")
    from engram.adapters.store import Store

    store = Store()
    with store.unit_of_work() as uow:
        entries = uow.sessions.window(ds, session, 0)
        warm_entries = uow.sessions.window(warm_ds, session, 0)
    batches = d.batches(d.gate(entries, 0))
    cassette = args.out / f"distill-cassette-{tag}.json"
    build_cassette(cassette, batches + d.batches(d.gate(warm_entries, 0)), args.llm_latency)

    env = {"ENGRAM_LLM_MODEL": f"replay:{cassette}", "ENGRAM_IMPROVE_AUTOMATIC": "false"}
    os.environ.update(env)
    reset_settings()
    from engram.celery_app import create_app

    app = create_app()
    others = [q for q in settings.queues if q != settings.queue_llm]
    procs = [start_worker(concurrency=args.workers, extra_env=env, log_path=args.out / f"distill-worker-{tag}.log", loglevel="info",
                          extra_args=(f"--queues={','.join(others)}",)),
             start_worker(concurrency=args.llm_threads, extra_env=env, log_path=args.out / f"distill-llm-{tag}.log", loglevel="info",
                          extra_args=(f"--queues={settings.queue_llm}", "--pool=threads"))]
    try:
        for proc in procs:
            wait_for_worker(app, proc)
        cold = run_fleet(app, store, f"{dataset}-warmup", warm_ds, session)  # fresh workers: models load
        fleet = run_fleet(app, store, dataset, ds, session)
    finally:
        for proc in procs:
            stop_worker(proc)
    floor = run_floor(entries, cassette, settings)
    calls = fleet["calls"] or 0
    report = {"entries": args.entries, "batches": len(batches), "llm_latency_s": args.llm_latency,
              "workers": args.workers, "llm_threads": args.llm_threads, "fleet": fleet, "cold_12_entries": cold, "floor_one_lane": floor,
              "ratio_stage_over_floor": fleet["stage_wall_s"] / floor["wall_s"],
              "ideal_wall_s": calls * args.llm_latency / d.MAX_IN_FLIGHT if args.llm_latency else None,
              "machine": "2 cores, shared with other helpers' runs", "date": time.strftime("%Y-%m-%d")}
    out = args.out / f"distill-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, default=str))
    cassette.unlink(missing_ok=True)
    print(f"entries: {args.entries}  batches: {len(batches)}  llm latency: {args.llm_latency}s  "
          f"(2-core machine shared with other runs, {report['date']})")
    print(f"fleet: stage {fleet['stage_wall_s']:.2f}s  run {fleet['run_wall_s']:.2f}s  lessons cognified "
          f"{fleet['cognified_wall_s']:.2f}s  calls {calls}  lessons {fleet['lessons']}  "
          f"max in flight {fleet['max_in_flight']}  ({fleet['stage_status']}, {fleet['stage_reason'] or 'completed'})")
    print(f"cold (fresh workers, 12 entries): stage {cold['stage_wall_s']:.2f}s, calls {cold['calls']}")
    print(f"floor (same calls, one lane, in process): {floor['wall_s']:.2f}s  lessons {floor['lessons']}  "
          f"ratio stage/floor {report['ratio_stage_over_floor']:.2f}"
          + (f"  ideal calls·L/5 {report['ideal_wall_s']:.2f}s" if args.llm_latency else ""))
    print(f"report: {out}")


if __name__ == "__main__":
    sys.exit(main())
