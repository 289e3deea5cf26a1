"""Bodies of the improve stages that do real work now, and the pending-work probe.

A body has gate(uow, ctx) → (status, reason) | None and run(ctx) → counts. Every write
opens its transaction with the claim's fence check, so a holder whose claim was taken over
has its writes refused (FencedOut) and rolled back.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from engram.adapters.embed import get_embedder
from engram.adapters.store import Store
from engram.models.payloads import RememberItem
from engram.pipelines.cognify.flow import open_run
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.pipelines.improve import registry
from engram.pipelines.improve.distill import MIN_CONFIDENCE
from engram.pipelines.improve.stages import distillation, feedback, global_context, preferences, qa, triplets, truth_stage
from engram.settings import Settings, get_settings
from engram.tasks.engine import cognify_inline


@dataclass
class StageContext:
    run: dict
    fence: int
    scopes: list[str]
    settings: Settings

    @property
    def dataset_id(self) -> uuid.UUID:
        return self.run["dataset_id"]

    @property
    def session_ids(self) -> list[str]:
        return list(self.run["session_ids"])

    @property
    def snapshot(self) -> dict:
        return self.run["snapshot"]

    def fenced(self):
        """A unit of work whose first statement checks (and records) this claim's fence."""
        return _Fenced(self.scopes, self.fence)


class _Fenced:
    def __init__(self, scopes: list[str], fence: int):
        self.scopes, self.fence, self._cm = scopes, fence, None

    def __enter__(self):
        self._cm = Store().unit_of_work()
        uow = self._cm.__enter__()
        uow.improve.check_fence(self.scopes, self.fence)
        return uow

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _enabled(name: str, s: Settings) -> bool:
    return registry.enabled(registry.BY_NAME[name], s.improve_disabled, s.improve_opt_in)


def _generates(s: Settings) -> bool:
    from engram.adapters.llm.gateway import gateway_from_settings

    try:
        return gateway_from_settings(s).generates
    except Exception:
        return False


def triplets_enabled(s: Settings) -> bool:
    return registry.enabled(registry.BY_NAME["triplet_enrichment"], s.improve_disabled, s.improve_opt_in)


def pending_work(uow, dataset_id: uuid.UUID, session_ids: list[str], retries: bool = True) -> dict:
    """The probe: per session the seq window above the watermark and unapplied feedback;
    changed edges when triplet enrichment is on. Nothing → the run is a no_op."""
    out: dict[str, Any] = {"sessions": {}, "triplets": 0}
    rows = {r["session_id"]: r for r in uow.improve.sessions(dataset_id, session_ids)} if session_ids else {}
    for sid in session_ids:
        r = rows.get(sid)
        out["sessions"][sid] = {
            "from": r["watermark_seq"] if r else 0, "upto": r["max_seq"] if r else 0,
            "new_entries": r["pending_entries"] if r else 0, "feedback": r["pending_feedback"] if r else 0}
    s = get_settings()
    if triplets_enabled(s):
        out["triplets"] = len(uow.improve.changed_edges(dataset_id, limit=1000))
    if _enabled("distill_sessions", s) and session_ids and _generates(s):
        # Usable entries a failed distillation left above its own watermark are work too.
        for sid, n in uow.learning.gated_pending(dataset_id, session_ids, MIN_CONFIDENCE).items():
            out["sessions"][sid]["distill"] = n
    out["truth"] = _enabled("build_truth_subspace", s) and bool(uow.learning.truth_due([dataset_id]))
    # retries=False (a holder re-checking for new work): a distillation that just failed is not
    # retried at once in the same claim; the next improve of the session retries it.
    out["pending"] = out["triplets"] > 0 or out["truth"] or any(
        v["new_entries"] or v["feedback"] or (retries and v.get("distill")) for v in out["sessions"].values())
    return out


class FeedbackWeights:
    def gate(self, uow, ctx: StageContext):
        if not uow.sessions.unapplied_feedback(ctx.dataset_id, ctx.session_ids):
            return ("skipped", "no_new_feedback")
        return None

    def run(self, ctx: StageContext) -> dict:
        with ctx.fenced() as uow:
            entries = uow.sessions.unapplied_feedback(ctx.dataset_id, ctx.session_ids, lock=True)
            counts = {"entries": len(entries)}
            for table, key in (("chunks", "source_chunk_ids"), ("edges", "source_edge_ids")):
                ids = {i for e in entries for i in (e[key] or [])}
                current = uow.improve.weights(table, ctx.dataset_id, ids)
                moved = feedback.new_weights(entries, current, key, registry.FEEDBACK_ALPHA)
                uow.improve.set_weights(table, moved)
                counts[table] = len(moved)
            uow.sessions.mark_feedback_applied(entries)
        return counts


class PersistSessionQA:
    """Session QA becomes dataset memory: a document per entry (node set user_sessions),
    cognified in this stage so its LLM use counts against the run's budget."""

    def _windows(self, uow, ctx: StageContext) -> dict[str, list[dict]]:
        current = {r["session_id"]: r["watermark_seq"] for r in uow.improve.sessions(ctx.dataset_id, ctx.session_ids)}
        out = {}
        for sid in ctx.session_ids:
            upto = ctx.snapshot["sessions"].get(sid, {}).get("upto", 0)
            entries = uow.sessions.window(ctx.dataset_id, sid, current.get(sid, 0), upto)
            if entries:
                out[sid] = entries
        return out

    def gate(self, uow, ctx: StageContext):
        return None if self._windows(uow, ctx) else ("skipped", "no_new_entries")

    def run(self, ctx: StageContext) -> dict:
        with Store().unit_of_work() as uow:
            windows = self._windows(uow, ctx)
        counts = {"entries": 0, "documents": 0, "duplicates": 0, "rejected": 0}
        to_cognify: list[tuple[uuid.UUID, list[str]]] = []
        with ctx.fenced() as uow:
            for sid, entries in windows.items():
                for e in entries:
                    counts["entries"] += 1
                    added = self._add(uow, ctx, sid, e)
                    if added is None:
                        counts["rejected"] += 1
                    elif added[1]:
                        to_cognify.append(added)
                    else:
                        counts["duplicates"] += 1
        for run_id, stages in to_cognify:
            cognify_inline(run_id, stages)
            counts["documents"] += 1
        with ctx.fenced() as uow:
            for sid in windows:
                uow.improve.advance_watermark(ctx.dataset_id, sid, ctx.snapshot["sessions"][sid]["upto"])
        return counts

    def _add(self, uow, ctx: StageContext, session_id: str, entry: dict) -> tuple[uuid.UUID, list[str]] | None:
        """The entry's document and the cognify stages still to run ([] = already memory)."""
        text = qa.render_qa(session_id, entry)
        try:
            item = prepare(RememberItem(text=text, name=qa.item_name(session_id, entry)),
                           ctx.settings.max_content_bytes, 0)
        except BadInput:
            return None  # an unusable turn never blocks the session; it stays in session memory
        item_id, created = uow.graph.add_item(
            ctx.dataset_id, item.digest, item.text, name=item.name, mime=item.mime,
            source=f"session:{session_id}#{entry['id']}", node_sets=[qa.NODE_SET])
        previous = None if created else uow.runs.latest_for_item(item_id)
        if previous is None:
            run_id = uuid.uuid4()
            return run_id, open_run(uow, run_id, ctx.dataset_id, item_id, options={},
                                    params={"doc_type": item.doc_type, "name": item.name,
                                            "improve_run": str(ctx.run["id"])})
        if previous["status"] == "completed":
            return previous["id"], []
        if previous["status"] == "failed":
            return previous["id"], uow.runs.reopen(previous["id"])
        # Left unfinished by an earlier attempt (or a holder that lost its claim): finish it here.
        return previous["id"], [s["stage"] for s in uow.runs.stages(previous["id"])
                                if s["status"] not in ("completed", "skipped")]


class TripletEnrichment:
    def gate(self, uow, ctx: StageContext):
        if not uow.improve.changed_edges(ctx.dataset_id, limit=1):
            return ("already_completed", "no edge changed since the last enrichment")
        return None

    def run(self, ctx: StageContext) -> dict:
        with Store().unit_of_work() as uow:
            edges = uow.improve.changed_edges(ctx.dataset_id)
        texts = [triplets.triplet_text(e["source"], e["relationship"], e["target"]) for e in edges]
        vectors = get_embedder(ctx.settings).embed(texts)
        with ctx.fenced() as uow:
            uow.improve.upsert_triplets(ctx.dataset_id, [dict(e, text=t, vector=v)
                                                         for e, t, v in zip(edges, texts, vectors)])
            if edges:
                uow.improve.set_triplet_watermark(ctx.dataset_id, max(e["updated_at"] for e in edges))
        return {"triplets": len(edges)}


class EngineContext:
    """The stage-engine context (run, dataset, sessions, snapshot, settings, ports) over this
    module's StageContext, so engine-shaped stage modules run here unchanged."""

    def __init__(self, run: dict, settings: Settings, scopes: list[str], fence: int):
        self.run, self.settings = run, settings
        self.ports = _Ports(settings, scopes, fence)

    run_id = property(lambda self: self.run["id"])
    dataset_id = property(lambda self: self.run["dataset_id"])
    session_ids = property(lambda self: list(self.run["session_ids"]))
    snapshot = property(lambda self: self.run["snapshot"] or {})


class _Ports:
    def __init__(self, settings: Settings, scopes: list[str], fence: int):
        self.settings, self.scopes, self.fence = settings, scopes, fence

    def llm(self):
        from engram.adapters.llm.gateway import gateway_from_settings

        return gateway_from_settings(self.settings)

    def embedder(self):
        return get_embedder(self.settings)

    def read(self):
        return Store().unit_of_work()

    def write(self):
        return _Fenced(self.scopes, self.fence)

    def cognify(self, run_id: uuid.UUID, stages: list[str]) -> None:
        cognify_inline(run_id, stages)

    def add_document(self, uow, item, *, source: str, node_sets: list[str]) -> tuple[uuid.UUID, uuid.UUID, list[str]]:
        """(item id, cognify run id, stages still to run); an unchanged known document has none."""
        item_id, created = uow.graph.add_item(self._dataset, item.digest,
                                              item.text, name=item.name, mime=item.mime, source=source,
                                              node_sets=node_sets)
        previous = None if created else uow.runs.latest_for_item(item_id)
        if previous is not None:
            if previous["status"] == "failed":
                return item_id, previous["id"], uow.runs.reopen(previous["id"])
            return item_id, previous["id"], []
        run_id = uuid.uuid4()
        return item_id, run_id, open_run(uow, run_id, self._dataset, item_id, options={},
                                         params={"doc_type": item.doc_type, "name": item.name})


def deferred_context(run_id: uuid.UUID) -> EngineContext:
    from engram.adapters.store.improve import fence_scopes

    with Store().unit_of_work() as uow:
        run = uow.improve.run(run_id)
    ctx = EngineContext(run, get_settings(), fence_scopes(run["dataset_id"], run["session_ids"]), run["fence"])
    ctx.ports._dataset = run["dataset_id"]
    return ctx


def finish_deferred(run_id: uuid.UUID, stage: str, status: str, reason, error, counts: dict, used: dict) -> dict:
    """The end of a stage that went on as a canvas (the improve chain continues after this)."""
    with Store().unit_of_work() as uow:
        uow.improve.finish_stage(run_id, stage, status, reason=reason, error=error, counts=counts, usage=used)
        if status == "fenced_out":
            run = uow.improve.run(run_id)
            uow.improve.finish_run(run_id, "lost", error=error)
            uow.improve.close_claim(run["claim_id"], "lost", note=error)
    return {"run_id": str(run_id), "stage": stage, "status": status, "reason": reason, "error": error}


class Shaped:
    """An engine-shaped stage module (gate/load/compute/persist over ctx.ports) as a body."""

    def __init__(self, module):
        self.m = module

    def _ctx(self, ctx: StageContext) -> EngineContext:
        e = EngineContext(ctx.run, ctx.settings, ctx.scopes, ctx.fence)
        e.ports._dataset = ctx.dataset_id
        return e

    def gate(self, uow, ctx: StageContext):
        gate = getattr(self.m, "gate", None)
        return gate(uow, self._ctx(ctx)) if gate else None

    def run(self, ctx: StageContext):
        e = self._ctx(ctx)
        inputs = None
        if getattr(self.m, "load", None):
            with Store().unit_of_work() as uow:
                inputs = self.m.load(uow, e)
        result = self.m.compute(inputs, e)
        if getattr(self.m, "persist", None) and not hasattr(result, "task"):
            with e.ports.write() as uow:
                return self.m.persist(uow, e, inputs, result)
        return result


class NotAvailable:
    def gate(self, uow, ctx):
        return ("not_available", "stage body not available in this version")

    def run(self, ctx):  # never reached: the gate always answers
        return {}


BODIES: dict[str, Any] = {
    "feedback_weights": FeedbackWeights(),
    "persist_session_qa": PersistSessionQA(),
    "distill_sessions": Shaped(distillation),
    "update_user_preferences": Shaped(preferences),
    "build_truth_subspace": Shaped(truth_stage),
    "triplet_enrichment": TripletEnrichment(),
    "global_context_index": Shaped(global_context),
}
for _spec in registry.STAGES:
    BODIES.setdefault(_spec.name, NotAvailable())
