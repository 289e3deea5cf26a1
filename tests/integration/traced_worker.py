"""A worker that keeps its spans in memory (the OpenTelemetry SDK's InMemorySpanExporter) and
writes them to a JSON file when it stops: the trace test reads what one remember produced.

Usage: python traced_worker.py SPANS.json HOSTNAME (the environment configures Engram)."""

from __future__ import annotations

import json
import sys

from celery.signals import worker_shutdown
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from engram.adapters import tracing
from engram.settings import get_settings

EXPORTER = InMemorySpanExporter()


@worker_shutdown.connect
def _dump(**_kwargs) -> None:
    spans = [{"name": s.name, "trace_id": format(s.context.trace_id, "032x"),
              "span_id": format(s.context.span_id, "016x"),
              "parent_id": format(s.parent.span_id, "016x") if s.parent else None,
              "kind": s.kind.name, "attributes": dict(s.attributes or {})}
             for s in EXPORTER.get_finished_spans()]
    with open(sys.argv[1], "w") as out:
        json.dump(spans, out)


if __name__ == "__main__":
    assert tracing.configure(get_settings(), EXPORTER, simple=True)
    from engram.celery_app import app

    # One process (a thread pool): every span of the chain lands in this one exporter.
    app.worker_main(["worker", "--pool=threads", "--concurrency=4", "--loglevel=info", "--without-heartbeat",
                     "--without-mingle", "--without-gossip", f"--hostname={sys.argv[2]}@%h",
                     f"--queues={','.join(get_settings().queues)}"])
