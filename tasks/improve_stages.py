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
from engram.pipelines.cognify import pipeline
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.pipelines.improve import registry
from engram.pipelines.improve.stages import feedback, qa, triplets
from engram.settings import Settings, get_settings


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


def triplets_enabled(s: Settings) -> bool:
    return registry.enabled(registry.BY_NAME["triplet_enrichment"], s.improve_disabled, s.improve_opt_in)


def pending_work(uow, dataset_id: uuid.UUID, session_ids: list[str]) -> dict:
    """The probe: per session the seq window above the watermark and unapplied feedback;
    changed edges when triplet enrichment is on. Nothing → the run is a no_op."""
    out: dict[str, Any] = {"sessions": {}, "triplets": 0}
    rows = {r["session_id"]: r for r in uow.improve.sessions(dataset_id, session_ids)} if session_ids else {}
    for sid in session_ids:
        r = rows.get(sid)
        out["sessions"][sid] = {
            "from": r["watermark_seq"] if r else 0, "upto": r["max_seq"] if r else 0,
            "new_entries": r["pending_entries"] if r else 0, "feedback": r["pending_feedback"] if r else 0}
    if triplets_enabled(get_settings()):
        out["triplets"] = len(uow.improve.changed_edges(dataset_id, limit=1000))
    out["pending"] = out["triplets"] > 0 or any(v["new_entries"] or v["feedback"] for v in out["sessions"].values())
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
            stages = pipeline.stages_for({})
            uow.runs.create(run_id, "cognify", stages, ctx.dataset_id, item_id,
                            params={"options": {}, "doc_type": item.doc_type, "name": item.name,
                                    "improve_run": str(ctx.run["id"])})
            uow.runs.finish_stage(run_id, "add", "completed", output={"data_item_id": str(item_id), "duplicate": False})
            return run_id, stages[1:]
        if previous["status"] == "completed":
            return previous["id"], []
        if previous["status"] == "failed":
            return previous["id"], uow.runs.reopen(previous["id"])
        # Left unfinished by an earlier attempt (or a holder that lost its claim): finish it here.
        return previous["id"], [s["stage"] for s in uow.runs.stages(previous["id"])
                                if s["status"] not in ("completed", "skipped")]


def cognify_inline(run_id: uuid.UUID, stages: list[str]) -> None:
    """Run a cognify run's stages in this process, in order (the same task code as the chain)."""
    from engram.celery_app import app
    from engram.tasks.cognify import STAGE_TASKS

    for stage in stages:
        out = app.tasks[STAGE_TASKS[stage]](run_id=str(run_id))
        if isinstance(out, dict) and out.get("status") in ("not_run", "failed"):
            raise RuntimeError(f"cognify run {run_id} stage {stage}: {out.get('reason') or out.get('error')}")


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


class NotAvailable:
    def gate(self, uow, ctx):
        return ("not_available", "stage body not available in this version")

    def run(self, ctx):  # never reached: the gate always answers
        return {}


BODIES: dict[str, Any] = {
    "feedback_weights": FeedbackWeights(),
    "persist_session_qa": PersistSessionQA(),
    "triplet_enrichment": TripletEnrichment(),
}
for _spec in registry.STAGES:
    BODIES.setdefault(_spec.name, NotAvailable())
