"""OpenTelemetry traces: off unless ENGRAM_OTLP_ENDPOINT is set (or a test passes an exporter).

When on, the maintained Celery instrumentation (opentelemetry-instrumentation-celery) makes a
span for every task a process sends or runs and carries the trace through the message headers,
so one remember and the stage chain it starts are one trace. The engine adds what a stage is
about to its task's span (tasks/observe.py). Importing this module starts nothing.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger("engram.tracing")

_lock = threading.Lock()
_configured = False


def enabled() -> bool:
    return _configured


def configure(settings, exporter: Any = None, *, simple: bool = False) -> bool:
    """Install the tracer provider and the Celery instrumentation once per process.

    exporter: default an OTLP/HTTP exporter to settings.otlp_endpoint; with neither, nothing
    happens (False). simple: export each span as it ends (tests) instead of in batches."""
    global _configured
    with _lock:
        if _configured:
            return True
        if exporter is None and not settings.otlp_endpoint:
            return False
        from opentelemetry import trace
        from opentelemetry.instrumentation.celery import CeleryInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(endpoint=_traces_url(settings.otlp_endpoint))
        provider = TracerProvider(resource=Resource.create({"service.name": settings.otel_service_name}))
        # A batch processor's export thread is restarted in a forked pool process (register_at_fork).
        provider.add_span_processor(SimpleSpanProcessor(exporter) if simple else BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        CeleryInstrumentor().instrument(tracer_provider=provider)
        _configured = True
        log.info("tracing: spans go to %s", settings.otlp_endpoint or type(exporter).__name__)
        return True


def _traces_url(endpoint: str) -> str:
    """An OTLP/HTTP collector's base URL (http://collector:4318) or its full traces URL."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def annotate(attributes: dict[str, Any]) -> None:
    """Add attributes to the span of the task running now (nothing when tracing is off)."""
    if not _configured:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({k: v for k, v in attributes.items() if v is not None})
