"""What a stage task or a recall tells operators: Prometheus metrics (adapters/metrics) and the
attributes of its OpenTelemetry span (adapters/tracing). Observing never fails the work."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from celery.exceptions import Ignore, Retry

from engram.adapters import metrics, tracing
from engram.adapters.store import Store
from engram.tasks.status import queue_depths

log = logging.getLogger("engram.observe")


def _labels_of(run_id: uuid.UUID, dataset: str | None, document: str | None) -> tuple[str, str | None]:
    """The stage message's names; a message without them (a run in this process, one sent by an
    older version) reads them from its run."""
    if dataset is not None:
        return dataset, document
    from engram.tasks.engine import run_labels

    try:
        found = run_labels([run_id]).get(run_id, {})
    except Exception:  # noqa: BLE001 - the stage's own open reports a database outage
        log.debug("could not read the names of run %s", run_id, exc_info=True)
        found = {}
    return found.get("dataset", ""), found.get("document")


def observed_stage(task, flow: str, stage: str, run_id: uuid.UUID, dataset: str | None, document: str | None,
                   run: Callable[[], dict]) -> dict:
    """Run one stage task's body, recording its duration by outcome and annotating its span.

    Outcomes: the stage's recorded status (completed, skipped, failed, not_run, ...), or
    redelivered (a message for a stage already done), retrying (a transient error or a wait for
    vectors, sent again), deferred (goes on as a canvas), error (raised)."""
    dataset, document = _labels_of(run_id, dataset, document)
    retries = getattr(task.request, "retries", 0) or 0
    tracing.annotate({"engram.flow": flow, "engram.stage": stage, "engram.run_id": str(run_id),
                      "engram.dataset": dataset, "engram.document": document, "engram.retries": retries})
    started, status, result = time.monotonic(), "error", None
    try:
        with metrics.dataset_label(dataset):
            result = run()
        status = str(result.get("status", "completed")) if isinstance(result, dict) else "completed"
        if isinstance(result, dict) and result.get("redelivered"):  # done before: not a second completion
            status = "redelivered"
        return result
    except Retry:
        status = "retrying"
        raise
    except Ignore:
        status = "deferred"
        raise
    finally:
        _record_stage(flow, stage, status, dataset, time.monotonic() - started, result)


def _record_stage(flow: str, stage: str, status: str, dataset: str, seconds: float, result) -> None:
    try:
        metrics.observe_stage(flow, stage, status, dataset, seconds)
        result = result if isinstance(result, dict) else {}
        tracing.annotate({"engram.status": status, "engram.llm_calls": result.get("llm_calls"),
                          "engram.tokens": result.get("tokens")})
    except Exception:  # noqa: BLE001 - metrics must never fail a stage that did its work
        log.warning("could not record stage %s.%s", flow, stage, exc_info=True)


def observed_recall(search_type: str | None, datasets: list[str], run: Callable[[], dict]) -> dict:
    """Run one recall, recording its latency by the search type it took (the route chosen)."""
    dataset = ",".join(sorted(datasets)) if datasets else "*"
    tracing.annotate({"engram.dataset": dataset, "engram.search_type": search_type})
    started, status, chosen = time.monotonic(), "error", search_type or "auto"
    try:
        with metrics.dataset_label(dataset):
            result = run()
        status, chosen = "ok", str(result.get("search_type") or chosen)
        return result
    finally:
        try:
            metrics.observe_recall(chosen, dataset, status, time.monotonic() - started)
        except Exception:  # noqa: BLE001
            log.warning("could not record a recall", exc_info=True)


def fleet_gauges() -> list[metrics.Gauges]:
    """What the serving process reads at each scrape: the run backlog and every queue's depth."""
    def backlog() -> dict[tuple[str, ...], float]:
        with Store().unit_of_work() as uow:
            return dict(uow.runs.backlog())

    def depths() -> dict[tuple[str, ...], float]:
        return {(queue,): n for queue, n in queue_depths().items()}

    return [metrics.Gauges("engram_run_backlog", "Runs not finished, by flow and status (pending, running)",
                           ["flow", "status"], backlog),
            metrics.Gauges("engram_queue_depth", "Messages waiting in each Engram queue (not those a worker "
                           "holds)", ["queue"], depths)]
