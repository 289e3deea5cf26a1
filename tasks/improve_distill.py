"""distill_sessions as a Celery canvas (SPEC 6.4). The stage's compute defers to curate_all:

    curate_all → chord(group(curate lane × ≤5), fan_out)
    fan_out    → chord(group(write lane × ≤5), publish)   (or publish at once: no proposals)

Each hop replaces its task, so the improve chain's later stages follow `publish`. Batches and
proposals are dealt round-robin to at most 5 lanes that make their calls one after another:
one distillation never has more than 5 LLM calls in flight. Lanes never raise (a failed call
is a result), so the chord always reaches publish, which ends the stage through the runner.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid

from celery import chord, group

from engram.adapters.claims import Claims
from engram.adapters.embed import get_embedder
from engram.adapters.llm import usage
from engram.adapters.llm.gateway import gateway_from_settings
from engram.adapters.redis_client import get_redis
from engram.adapters.store import Store
from engram.pipelines.improve import distill_run as dr
from engram.pipelines.improve.claiming import claim_of
from engram.pipelines.improve.flow import DISTILL_SESSIONS, IMPROVE
from engram.pipelines.improve.stages import distillation
from engram.settings import get_settings
from engram.tasks.base import engram_task
from engram.tasks.engine import end_deferred
from engram.celery_app import app

log = logging.getLogger("engram.improve.distill")
STAGE = DISTILL_SESSIONS


def _sig(name: str, **kwargs):
    return app.signature(f"engram.improve.distill.{name}", kwargs=kwargs)


def _renew(run_id: str) -> None:
    """Keep the run's claim alive while its lanes work (the stage task itself has ended)."""
    with contextlib.suppress(Exception):
        with Store().unit_of_work() as uow:
            row = uow.improve.claim(uow.runs.flow_run(uuid.UUID(run_id), IMPROVE.name)["claim_id"])
        Claims(get_redis()).renew(claim_of(row, get_settings().lock_lease_seconds))


@engram_task("engram.improve.distill.curate_all", acks_late=True)
def curate_all(self, run_id: str, batches: list[dict], sessions: dict):
    lanes = [_sig("curate", run_id=run_id, batches=lane) for lane in dr.lanes(batches)]
    raise self.replace(chord(group(lanes), _sig("fan_out", run_id=run_id, sessions=sessions)))


@engram_task("engram.improve.distill.curate", acks_late=True)
def curate(self, run_id: str, batches: list[dict]) -> dict:
    _renew(run_id)
    with usage.usage_scope() as used:
        try:
            structured = gateway_from_settings(get_settings()).structured
        except Exception as exc:  # e.g. a missing cassette: every call of the lane failed
            structured = _raiser(exc)
        out = dr.curate_lane(batches, structured, time.time)
    return dict(out, usage=used.as_dict())


def _raiser(exc: Exception):
    def fail(*_args, **_kwargs):
        raise exc

    return fail


@engram_task("engram.improve.distill.fan_out", acks_late=True)
def fan_out(self, results: list[dict], run_id: str, sessions: dict):
    """Merge the curator lanes; look up every proposal's writer inputs here (one embedding
    batch, store reads), so writer lanes only call the LLM."""
    proposals = dr.merge_lanes(results, sessions)
    stats = {"calls": [c for r in results for c in r["calls"]], "usage": _sum([r["usage"] for r in results])}
    if not proposals:
        return publish([], run_id=run_id, sessions=sessions, stats=stats)
    settings = get_settings()
    with Store().unit_of_work() as uow:
        dataset = uow.runs.flow_run(uuid.UUID(run_id), IMPROVE.name)["dataset_id"]
        items = dr.writer_inputs(proposals, get_embedder(settings).embed,
                                 lambda v, k: uow.learning.similar_lessons(dataset, v, k),
                                 lambda v, k: uow.learning.glossary(dataset, v, k),
                                 lambda ids: uow.learning.entries(dataset, ids))
    lanes = [_sig("write", run_id=run_id, proposals=lane) for lane in dr.lanes(items)]
    raise self.replace(chord(group(lanes), _sig("publish", run_id=run_id, sessions=sessions, stats=stats)))


@engram_task("engram.improve.distill.write", acks_late=True)
def write(self, run_id: str, proposals: list[dict]) -> dict:
    """Writer lane: one call per proposal, with the inputs fan_out looked up."""
    _renew(run_id)
    with usage.usage_scope() as used:
        try:
            structured = gateway_from_settings(get_settings()).structured
        except Exception as exc:
            structured = _raiser(exc)
        out = dr.write_lane(proposals, structured, time.time)
    return dict(out, usage=used.as_dict())


def _sum(usages: list[dict]) -> dict:
    total: dict = {}
    for u in usages:
        for k, v in (u or {}).items():
            total[k] = total.get(k, 0) + v
    return total


@engram_task("engram.improve.distill.publish", acks_late=True)
def publish(self, results: list[dict], run_id: str, sessions: dict, stats: dict) -> dict:
    """The canvas's last step: the stage ends through the runner (its conclude, then its persist)."""
    calls = stats["calls"] + [c for r in results for c in r["calls"]]
    used = _sum([stats["usage"]] + [r["usage"] for r in results])
    counts = {"calls": len(calls), "max_in_flight": dr.max_in_flight(calls)}
    return end_deferred(STAGE, uuid.UUID(run_id), lambda ctx: distillation.conclude(
        ctx, results, sessions, counts, get_embedder(ctx.settings).embed), used, failed_output=counts)
