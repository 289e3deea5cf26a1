"""Prometheus metrics: what every worker process records, and the endpoint that serves them.

Recording is always on and cheap (in-process counters); only `engram worker --metrics-port`
(or ENGRAM_METRICS_PORT) serves them. A worker is a tree of processes (the supervisor, the
prefork pool, the api worker's threads), so the server runs prometheus_client's multiprocess
mode: every process writes its values to files in one directory, and the endpoint adds them
up at each scrape. `prepare_multiprocess` must run before any metric records a value (the
worker command calls it first thing); prometheus_client is imported only once a metric is
used, so importing Engram never starts or decides anything.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any
import logging

STAGE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
RECALL_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

# The dataset the running stage or recall works for: LLM calls made below it are labelled with it.
_dataset: contextvars.ContextVar[str] = contextvars.ContextVar("engram_metrics_dataset", default="")


@contextlib.contextmanager
def dataset_label(name: str | None) -> Iterator[None]:
    token = _dataset.set(name or "")
    try:
        yield
    finally:
        _dataset.reset(token)


def current_dataset() -> str:
    return _dataset.get()


@cache
def _metrics() -> dict[str, Any]:
    from prometheus_client import Counter, Histogram

    return {
        "stage": Histogram("engram_stage_duration_seconds",
                           "Stage task durations (the _count is the number of stage tasks), by outcome",
                           ["flow", "stage", "status", "dataset"], buckets=STAGE_BUCKETS),
        "llm_calls": Counter("engram_llm_calls", "LLM calls (failed ones too)", ["model", "dataset"]),
        "prompt": Counter("engram_llm_prompt_tokens", "Prompt tokens sent to the LLM", ["model", "dataset"]),
        "completion": Counter("engram_llm_completion_tokens", "Completion tokens the LLM returned",
                              ["model", "dataset"]),
        "embedding": Counter("engram_embedding_texts",
                             "Texts embedded by a batch, or reused (their vector was already stored)",
                             ["model", "outcome"]),
        "recall": Histogram("engram_recall_duration_seconds", "engram.recall latency by search type",
                            ["search_type", "dataset", "status"], buckets=RECALL_BUCKETS),
    }


def observe_stage(flow: str, stage: str, status: str, dataset: str, seconds: float) -> None:
    _metrics()["stage"].labels(flow, stage, status, dataset).observe(seconds)


def count_llm_call(model: str, prompt_tokens: int, completion_tokens: int) -> None:
    m, dataset = _metrics(), current_dataset()
    m["llm_calls"].labels(model, dataset).inc()
    # Zero adds too: the offline extractor reports no tokens, and its series still show it ran.
    m["prompt"].labels(model, dataset).inc(max(0, prompt_tokens))
    m["completion"].labels(model, dataset).inc(max(0, completion_tokens))


def count_embedding(model: str, embedded: int = 0, reused: int = 0) -> None:
    m = _metrics()["embedding"]
    if embedded:
        m.labels(model, "embedded").inc(embedded)
    if reused:
        m.labels(model, "reused").inc(reused)


def observe_recall(search_type: str, dataset: str, status: str, seconds: float) -> None:
    _metrics()["recall"].labels(search_type, dataset, status).observe(seconds)


# ------------------------------------------------------------------ serving


def prepare_multiprocess(directory: Path) -> None:
    """Every process of this worker tree records into `directory` (emptied: a previous run's
    files would add a dead fleet's counts). Call before any metric records a value."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    if "prometheus_client.values" in sys.modules:  # imported already: values made from now on go to files
        from prometheus_client import values

        values.ValueClass = values.get_value_class()


class Gauges:
    """Gauges read at scrape time in the serving process (`read` -> {labels tuple: value})."""

    def __init__(self, name: str, documentation: str, labels: list[str],
                 read: Callable[[], dict[tuple[str, ...], float]]):
        self.name, self.documentation, self.labels, self.read = name, documentation, labels, read

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        family = GaugeMetricFamily(self.name, self.documentation, labels=self.labels)
        try:
            values = self.read()
        except Exception:  # noqa: BLE001 - a scrape during a database or broker outage still answers
            logging.getLogger("engram.metrics").warning("could not read %s", self.name, exc_info=True)
            values = {}
        for labels, value in sorted(values.items()):
            family.add_metric(list(labels), value)
        yield family


def serve(port: int, address: str, collectors: Iterable[Any] = ()):
    """Serve /metrics on address:port in a daemon thread of this process: every process's
    files added up, and `collectors` read at each scrape. Returns the server (shutdown())."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        raise RuntimeError("metrics: prepare_multiprocess(directory) must run first")
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    for collector in collectors:
        registry.register(collector)
    server, _thread = start_http_server(port, addr=address, registry=registry)
    return server
