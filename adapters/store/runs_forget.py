"""Run rows at a dataset's ends of life: RunRepository's part that removes a forgotten item's
traces (tombstones, scrubbed references, a dataset's improve history) and restores an exported
dataset's history on import. A mixin of RunRepository, so run rows keep one writer."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, case, func, insert, text, update

from engram.models.tables import pipeline_runs, stage_runs


class RunForgetting:
    conn: Connection

    def restore(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """An imported dataset's run history, rows as the export wrote them (checked by the caller)."""
        self.conn.execute(insert({"pipeline_runs": pipeline_runs, "stage_runs": stage_runs}[table]), list(rows))

    def tombstone(self, run_ids: Sequence[uuid.UUID]) -> int:
        """Forgotten runs stay (their ids answer status) but hold nothing of their item."""
        if not run_ids:
            return 0
        ids = list(run_ids)
        self.conn.execute(
            update(stage_runs).where(stage_runs.c.run_id.in_(ids))
            .values(output=None, error=None, reason=None,
                    status=case((stage_runs.c.status.in_(("completed", "skipped")), stage_runs.c.status),
                                else_="forgotten")))
        return self.conn.execute(
            update(pipeline_runs).where(pipeline_runs.c.id.in_(ids))
            .values(status="forgotten", error=None, params={},
                    finished_at=func.coalesce(pipeline_runs.c.finished_at, func.now()))).rowcount

    def scrub(self, dataset_ids: Sequence[uuid.UUID], patterns: Sequence[str],
              value: Callable[[Any], Any], line: Callable[[str | None], str | None]) -> None:
        """Runs of the datasets whose stage outputs, errors, reasons or params match one of the
        LIKE `patterns` (lower case) are rewritten: `value` cleans a JSON value, `line` a text."""
        p = {"d": list(dataset_ids), "m": list(patterns)}
        stages = self.conn.execute(text(
            "SELECT s.run_id, s.stage, s.output, s.error, s.reason FROM stage_runs s"
            " JOIN pipeline_runs r ON r.id = s.run_id WHERE r.dataset_id = ANY(CAST(:d AS uuid[]))"
            " AND (lower(CAST(s.output AS text)) LIKE ANY(:m) OR lower(s.error) LIKE ANY(:m)"
            " OR lower(s.reason) LIKE ANY(:m)) FOR UPDATE OF s"), p).all()
        for row in stages:
            self.conn.execute(text(
                "UPDATE stage_runs SET output = CAST(:o AS jsonb), error = :e, reason = :r"
                " WHERE run_id = :run AND stage = :stage"),
                {"o": None if row.output is None else json.dumps(value(row.output)),
                 "e": line(row.error), "r": line(row.reason), "run": row.run_id, "stage": row.stage})
        runs = self.conn.execute(text(
            "SELECT id, params, error FROM pipeline_runs WHERE dataset_id = ANY(CAST(:d AS uuid[]))"
            " AND (lower(CAST(params AS text)) LIKE ANY(:m) OR lower(error) LIKE ANY(:m)) FOR UPDATE"), p).all()
        for row in runs:
            self.conn.execute(text("UPDATE pipeline_runs SET params = CAST(:p AS jsonb), error = :e WHERE id = :i"),
                              {"p": json.dumps(value(row.params) or {}), "e": line(row.error), "i": row.id})

    def delete_flow_runs(self, dataset_id: uuid.UUID, flow: str) -> int:
        """A forgotten dataset's runs of one flow (improve history), stages and all."""
        return self.conn.execute(
            pipeline_runs.delete().where(pipeline_runs.c.dataset_id == dataset_id, pipeline_runs.c.pipeline == flow)
        ).rowcount
