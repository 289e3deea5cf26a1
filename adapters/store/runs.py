"""Pipeline runs and their stages: status, attempts, errors, timings, usage, stage outputs.

Every flow's runs live in pipeline_runs / stage_runs, and this repository is their one writer:
it opens a run with its first stages done, starts and finishes stages (with the run's totals and
its open-stage count) and finishes runs, for every flow. Its readers by run id (`get`, `lock`,
the status counts) answer for the flows a producer follows (cognify, graph passes, capture);
an improve run is read with `flow_run` (its claim through adapters/store/improve.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, String, and_, func, select, update
from sqlalchemy.dialects.postgresql import insert

from engram.adapters.store.runs_forget import RunForgetting
from engram.models.tables import data_items, dataset_grants, datasets, pipeline_runs, stage_runs


def _now():
    """The database's clock: run times are compared by whichever host sweeps them (a worker on a
    machine whose clock runs ahead must not find other hosts' live runs stale, nor one behind
    miss dead ones), so no run time comes from a worker's own clock."""
    return func.clock_timestamp()


# Improve runs answer through their claim (engram.improve.run_status), not engram.status, and
# count neither as backlog nor as runs the heartbeat sweep resumes.
_PRODUCER_RUN = pipeline_runs.c.pipeline != "improve"

LABEL_MAX = 200  # a document name shown on a stage task is cut here


def _insert_all(conn: Connection, table, rows: list[dict]) -> None:
    """One statement for rows of one shape (a batch of runs of one flow), else one each."""
    if len({tuple(sorted(r)) for r in rows}) == 1:
        conn.execute(insert(table), rows)
    else:
        for row in rows:
            conn.execute(insert(table).values(row))


class RunRepository(RunForgetting):
    def __init__(self, conn: Connection):
        self.conn = conn

    def open(self, run_id: uuid.UUID, pipeline: str, stages: list[str], *, dataset: uuid.UUID | None,
             data_item: uuid.UUID | None = None, params: dict | None = None, done: dict | None = None,
             status: str = "pending", fatal: Sequence[str] = (), claim: dict | None = None) -> None:
        """Open one run of any flow with its first stages done: see create_many."""
        self.create_many([{"id": run_id, "pipeline": pipeline, "stages": stages, "dataset": dataset,
                           "data_item": data_item, "params": params, "done": done or {}, "status": status,
                           "fatal": fatal, "claim": claim}])

    def create(self, run_id: uuid.UUID, pipeline: str, stages: list[str], dataset: uuid.UUID | None,
               data_item: uuid.UUID | None = None, params: dict | None = None) -> None:
        """A run with no stage done yet (`open` with its defaults)."""
        self.open(run_id, pipeline, stages, dataset=dataset, data_item=data_item, params=params)

    def create_many(self, runs: list[dict[str, Any]]) -> None:
        """Open runs in two statements: the one writer of new run rows, every flow. Each dict: id,
        pipeline, stages, dataset, data_item, params, `done`: {stage: output} of stages already
        completed (e.g. the accept's `add`), and optionally `status` (default pending; an improve
        run opens running, or no_op with no stages), `fatal` (the stages whose failure aborts an
        improve run) and `claim` (an improve run's claim columns: claim_id, pass, session_ids,
        fence, trigger, snapshot, budget). A run that is not pending has started; one with no
        stage left to do has finished."""
        if not runs:
            return
        now = self.conn.execute(select(_now())).scalar_one()  # a value: these are multi-row inserts
        rows = []
        for r in runs:
            done, status = r.get("done") or {}, r.get("status") or "pending"
            rows.append({"id": r["id"], "pipeline": r["pipeline"], "dataset_id": r["dataset"],
                         "data_item_id": r.get("data_item"), "status": status, "params": r.get("params") or {},
                         "heartbeat_at": now if done else None, "started_at": None if status == "pending" else now,
                         "finished_at": None if any(s not in done for s in r["stages"]) else now,
                         **(r.get("claim") or {})})
        _insert_all(self.conn, pipeline_runs, rows)
        stages = [{"run_id": r["id"], "stage": s, "position": i, "fatal": s in set(r.get("fatal") or ()),
                   "status": "completed" if s in (r.get("done") or {}) else "pending",
                   "output": (r.get("done") or {}).get(s), "finished_at": now if s in (r.get("done") or {}) else None}
                  for r in runs for i, s in enumerate(r["stages"])]
        if stages:
            self.conn.execute(insert(stage_runs), stages)

    def flow_run(self, run_id: uuid.UUID, flow: str, lock: bool = False) -> dict | None:
        """A run of one flow (improve runs are read here; `get` and `lock` answer producer runs)."""
        query = select(pipeline_runs).where(pipeline_runs.c.id == run_id, pipeline_runs.c.pipeline == flow)
        row = self.conn.execute(query.with_for_update() if lock else query).mappings().first()
        return dict(row) if row else None

    def get(self, run_id: uuid.UUID) -> dict | None:
        row = self.conn.execute(select(pipeline_runs).where(pipeline_runs.c.id == run_id, _PRODUCER_RUN)
                                ).mappings().first()
        return dict(row) if row else None

    def lock(self, run_id: uuid.UUID) -> dict | None:
        """The run row, locked for this transaction (serialises a run's state changes)."""
        row = (
            self.conn.execute(select(pipeline_runs).where(pipeline_runs.c.id == run_id, _PRODUCER_RUN).with_for_update())
            .mappings()
            .first()
        )
        return dict(row) if row else None

    def lock_with_stage(self, run_id: uuid.UUID, stage: str) -> tuple[dict | None, dict | None]:
        """The run row locked for this transaction (as `lock`) and its stage's row, in one
        statement: what a stage task reads first on every hop."""
        row = (
            self.conn.execute(
                select(pipeline_runs, stage_runs.c.status.label("_stage_status"))
                .select_from(pipeline_runs.outerjoin(
                    stage_runs, and_(stage_runs.c.run_id == pipeline_runs.c.id, stage_runs.c.stage == stage)))
                .where(pipeline_runs.c.id == run_id, _PRODUCER_RUN)
                .with_for_update(of=pipeline_runs)
            )
            .mappings()
            .first()
        )
        if row is None:
            return None, None
        run = dict(row)
        status = run.pop("_stage_status")
        return run, (None if status is None else {"run_id": run_id, "stage": stage, "status": status})

    def labels(self, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, str]]:
        """What an operator reads on a run's stage tasks (Flower, metrics, traces): its dataset's
        name and its document's name, never the document's text. Any flow (improve too). A
        capture's object shows no name: its title is memory, and task events outlive forget."""
        rows = self.conn.execute(
            select(pipeline_runs.c.id, pipeline_runs.c.pipeline, datasets.c.name.label("dataset"),
                   data_items.c.name.label("document"),
                   data_items.c.source.label("source"))
            .select_from(pipeline_runs.outerjoin(datasets, datasets.c.id == pipeline_runs.c.dataset_id)
                         .outerjoin(data_items, data_items.c.id == pipeline_runs.c.data_item_id))
            .where(pipeline_runs.c.id.in_(list(run_ids)))
        ).mappings()
        out: dict[uuid.UUID, dict[str, str]] = {}
        for r in rows:
            labels = {"dataset": r["dataset"] or ""}
            document = r["document"] or r["source"]
            if document and r["pipeline"] != "capture":
                labels["document"] = document[:LABEL_MAX]
            out[r["id"]] = labels
        return out

    def backlog(self) -> dict[tuple[str, str], int]:
        """Runs not finished, by flow and status (pending, running): every flow, improve too."""
        rows = self.conn.execute(
            select(pipeline_runs.c.pipeline, pipeline_runs.c.status, func.count())
            .where(pipeline_runs.c.status.in_(["pending", "running"]))
            .group_by(pipeline_runs.c.pipeline, pipeline_runs.c.status)
        )
        return {(pipeline, status): n for pipeline, status, n in rows}

    def stages(self, run_id: uuid.UUID) -> list[dict]:
        rows = self.conn.execute(
            select(stage_runs).where(stage_runs.c.run_id == run_id).order_by(stage_runs.c.position)
        ).mappings()
        return [dict(r) for r in rows]

    def stage_statuses(self, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[dict]]:
        """run id -> its stages in order, without their outputs (a stage's output can hold a whole
        document's chunks or graph): one query for a page of runs, as status shows them."""
        if not run_ids:
            return {}
        columns = [c for c in stage_runs.c if c.name != "output"]
        rows = self.conn.execute(
            select(*columns).where(stage_runs.c.run_id.in_(run_ids))
            .order_by(stage_runs.c.run_id, stage_runs.c.position)
        ).mappings()
        out: dict[uuid.UUID, list[dict]] = {r: [] for r in run_ids}
        for r in rows:
            out[r["run_id"]].append(dict(r))
        return out

    def stage_output(self, run_id: uuid.UUID, stage: str) -> Any:
        return self.conn.execute(
            select(stage_runs.c.output).where(stage_runs.c.run_id == run_id, stage_runs.c.stage == stage)
        ).scalar()

    def start_stage(self, run_id: uuid.UUID, stage: str) -> None:
        """The stage running and its run with it, in one statement (one round trip a hop)."""
        now = _now()
        started = (
            update(stage_runs)
            .where(stage_runs.c.run_id == run_id, stage_runs.c.stage == stage)
            .values(status="running", attempts=stage_runs.c.attempts + 1, started_at=now, error=None)
            .returning(stage_runs.c.run_id)
            .cte("started")
        )
        self.conn.execute(
            update(pipeline_runs)
            .where(pipeline_runs.c.id == run_id, pipeline_runs.c.id.in_(select(started.c.run_id)))
            .values(
                status="running",
                heartbeat_at=now,
                started_at=func.coalesce(pipeline_runs.c.started_at, now),
                error=None,
            )
        )

    def finish_stage(
        self,
        run_id: uuid.UUID,
        stage: str,
        status: str,
        *,
        output: Any = None,
        error: str | None = None,
        reason: str | None = None,
        usage: dict | None = None,
    ) -> dict:
        """Record a stage's end (or retry) and add its usage to the run's; returns the run's totals
        after it and how many of its stages are still open ({"llm_calls", "tokens", "open_stages"}:
        pending or running): no second read of the rows just written."""
        usage = usage or {}
        self.conn.execute(
            update(stage_runs)
            .where(stage_runs.c.run_id == run_id, stage_runs.c.stage == stage)
            .values(
                status=status,
                output=output,
                error=error,
                reason=reason,
                finished_at=_now(),
                started_at=func.coalesce(stage_runs.c.started_at, _now()),  # a stage decided without starting
                llm_calls=stage_runs.c.llm_calls + usage.get("calls", 0),
                prompt_tokens=stage_runs.c.prompt_tokens + usage.get("prompt_tokens", 0),
                completion_tokens=stage_runs.c.completion_tokens + usage.get("completion_tokens", 0),
            )
        )
        tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        totals = self.conn.execute(
            update(pipeline_runs)
            .where(pipeline_runs.c.id == run_id)
            .values(
                heartbeat_at=_now(),
                llm_calls=pipeline_runs.c.llm_calls + usage.get("calls", 0),
                tokens=pipeline_runs.c.tokens + tokens,
            )
            .returning(pipeline_runs.c.llm_calls, pipeline_runs.c.tokens, self._open_stages(run_id).label("open_stages"))
        ).mappings().first()
        return dict(totals) if totals else {"llm_calls": 0, "tokens": 0, "open_stages": 0}

    @staticmethod
    def _open_stages(run_id: uuid.UUID):
        """A run's stages not yet ended: neither completed, skipped nor failed (a statement after
        this transaction's earlier writes sees them)."""
        return (select(func.count()).select_from(stage_runs)
                .where(stage_runs.c.run_id == run_id, stage_runs.c.status.not_in(["completed", "skipped", "failed"]))
                .scalar_subquery())

    def finish_run(self, run_id: uuid.UUID, status: str, error: str | None = None) -> None:
        self.conn.execute(
            update(pipeline_runs)
            .where(pipeline_runs.c.id == run_id)
            .values(status=status, error=error, finished_at=_now())
        )

    def reopen(self, run_id: uuid.UUID) -> list[str]:
        """Mark a run for another attempt; returns the stages still to do (completed ones stay)."""
        self.conn.execute(
            update(stage_runs)
            .where(stage_runs.c.run_id == run_id, stage_runs.c.status.in_(["failed", "running"]))
            .values(status="pending")
        )
        self.conn.execute(
            update(pipeline_runs)
            .where(pipeline_runs.c.id == run_id)
            .values(status="pending", error=None, finished_at=None, heartbeat_at=_now(),
                    attempts=pipeline_runs.c.attempts + 1)
        )
        return [s["stage"] for s in self.stages(run_id) if s["status"] == "pending"]

    def reopen_from(self, run_id: uuid.UUID, stages: Sequence[str]) -> None:
        """Reopen a run at these stages (a capture reprocess): they run again, in order."""
        self.conn.execute(update(stage_runs).where(stage_runs.c.run_id == run_id, stage_runs.c.stage.in_(list(stages)))
                          .values(status="pending", error=None, reason=None))
        self.conn.execute(update(pipeline_runs).where(pipeline_runs.c.id == run_id).values(
            status="pending", error=None, finished_at=None, heartbeat_at=_now(),
            attempts=pipeline_runs.c.attempts + 1))

    def heartbeat(self, run_id: uuid.UUID) -> None:
        self.conn.execute(update(pipeline_runs).where(pipeline_runs.c.id == run_id).values(heartbeat_at=_now()))

    def open_count(self) -> int:
        """Runs pending or running, fleet-wide (the partial index ix_pipeline_runs_open answers it)."""
        return self.conn.execute(
            select(func.count()).select_from(pipeline_runs)
            .where(pipeline_runs.c.status.in_(["pending", "running"]), _PRODUCER_RUN)
        ).scalar_one()

    def finished_since(self, seconds: float) -> int:
        """Runs that finished in the last `seconds` (ix_pipeline_runs_finished)."""
        return self.conn.execute(
            select(func.count()).select_from(pipeline_runs)
            .where(pipeline_runs.c.finished_at > _now() - timedelta(seconds=seconds), _PRODUCER_RUN)
        ).scalar_one()

    def stale(self, older_than_seconds: int) -> list[dict]:
        """Open runs nobody has touched for a while: their worker most likely died. Each with
        `idle_seconds`, measured on the database's clock (see stale_since)."""
        cutoff = _now() - timedelta(seconds=older_than_seconds)
        seen = func.coalesce(pipeline_runs.c.heartbeat_at, pipeline_runs.c.created_at)
        rows = self.conn.execute(
            select(pipeline_runs, func.extract("epoch", _now() - seen).label("idle_seconds"))
            .where(
                pipeline_runs.c.status.in_(["pending", "running"]),
                _PRODUCER_RUN,
                func.coalesce(pipeline_runs.c.heartbeat_at, pipeline_runs.c.created_at) < cutoff,
            )
            .with_for_update(skip_locked=True)
        ).mappings()
        return [dict(r) for r in rows]

    @staticmethod
    def stale_since(run: dict, seconds: int) -> bool:
        """Whether a run from stale() went untouched for `seconds`."""
        return float(run["idle_seconds"]) > seconds

    def for_dataset(self, dataset: uuid.UUID, limit: int = 100) -> list[dict]:
        rows = self.conn.execute(
            select(pipeline_runs)
            .where(pipeline_runs.c.dataset_id == dataset, _PRODUCER_RUN)
            .order_by(pipeline_runs.c.created_at.desc())
            .limit(limit)
        ).mappings()
        return [dict(r) for r in rows]

    def latest_for_item(self, data_item: uuid.UUID) -> dict | None:
        row = (
            self.conn.execute(
                select(pipeline_runs)
                .where(pipeline_runs.c.data_item_id == data_item)
                .order_by(pipeline_runs.c.created_at.desc())
                .limit(1)
            )
            .mappings()
            .first()
        )
        return dict(row) if row else None

    def ids_starting(self, prefix: str, user_id: uuid.UUID, limit: int = 2) -> list[uuid.UUID]:
        """Runs whose id starts with `prefix` (as the CLI shows them, shortened) in datasets the
        user may read; `limit` 2 is enough to tell a unique prefix from an ambiguous one."""
        rows = self.conn.execute(
            select(pipeline_runs.c.id)
            .join(dataset_grants, dataset_grants.c.dataset_id == pipeline_runs.c.dataset_id)
            .where(func.cast(pipeline_runs.c.id, String).startswith(prefix, autoescape=True), _PRODUCER_RUN,
                   dataset_grants.c.principal == f"user:{user_id}", dataset_grants.c.permission == "read")
            .order_by(pipeline_runs.c.id)
            .limit(limit)
        ).scalars()
        return list(rows)

    def counts_by_status(self, dataset: uuid.UUID) -> dict[str, int]:
        rows = self.conn.execute(
            select(pipeline_runs.c.status, func.count())
            .where(pipeline_runs.c.dataset_id == dataset, _PRODUCER_RUN)
            .group_by(pipeline_runs.c.status)
        ).all()
        return {status: n for status, n in rows}
