"""Improve claiming as a use case (SPEC 6.1, 6.2): start, begin a pass, finish a pass, release,
and the expiry of a crashed holder's claim. No Celery: over a unit of work and a Claims port.

A claim covers an improve's sessions and its dataset twice: in the lock (the Claims port: every
key or none, a lease, a fencing number; adapters/claims.py implements it on Redis) and in a row
of improve_claims. Each pass of a claim is one improve run, opened with the improve flow's
stages pending (none: a no_op run). A claimant that finds the lock held leaves a rerun request
instead; releasing a claim hands leftover requests on. What a call commits comes back as a
`Step`: the caller (tasks/improve.py) enqueues the pass's chain or starts the rerun requests
after the commit, and calls `abandon` when that enqueue fails. Every write of a claim's run
first checks its fencing number (FencedOut when the claim was taken over meanwhile).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from engram.models.payloads import ImproveResult
from engram.pipelines.improve import registry
from engram.pipelines.improve.flow import IMPROVE

UnitOfWork = Callable[[], AbstractContextManager[Any]]
# The pending-work probe (pipelines/improve/flow.py pending_work, bound to settings and the LLM):
# (uow, dataset, sessions, retries) -> snapshot with "pending".
Probe = Callable[[Any, uuid.UUID, list[str], bool], dict]


@dataclass(frozen=True)
class Claim:
    keys: tuple[str, ...]
    value: str  # token|fence|holder info: what renew and release compare
    fence: int
    lease_ms: int

    @property
    def token(self) -> str:
        return self.value.split("|", 1)[0]


@dataclass(frozen=True)
class Busy:
    key: str
    holder: str


class FencedOut(RuntimeError):
    """A write carried a fencing number below one already written: its claim was lost."""


class UnknownRun(LookupError):
    """No improve run has this id."""


class Claims(Protocol):
    """The lock an improve claim lives in: every key or none, a lease, a fencing number never
    below `floor`; renew and release act only for the holder."""

    def keys(self, dataset_id: uuid.UUID, session_ids: Sequence[str]) -> list[str]: ...
    def claim(self, keys: Sequence[str], lease_seconds: float, floor: int = 0,
              info: dict | None = None) -> Claim | Busy: ...
    def renew(self, claim: Claim) -> bool: ...
    def release(self, claim: Claim) -> int: ...
    def held(self, claim: Claim) -> bool: ...
    def describe(self, value: str) -> dict: ...


def fence_scopes(dataset_id, session_ids: Sequence[str]) -> list[str]:
    return sorted({f"session:{dataset_id}:{s}" for s in session_ids}) + [f"dataset:{dataset_id}"]


def claim_of(row: dict, lease_seconds: float) -> Claim:
    """The lock's claim as its improve_claims row recorded it."""
    return Claim(keys=tuple(row["claim_keys"]), value=row["claim_value"], fence=row["fence"],
                 lease_ms=max(1, int(lease_seconds * 1000)))


@dataclass(frozen=True)
class Policy:
    lease_seconds: float
    max_passes: int  # passes one claim makes while new work keeps arriving
    max_llm_calls: int  # a run's default budget (0: unlimited)
    max_tokens: int


@dataclass(frozen=True)
class Pass:
    """One improve run of a claim: `running` (its stages to enqueue) or `no_op` (nothing pending)."""

    run_id: uuid.UUID
    status: str
    stages: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """A call's committed answer and what the caller does next: enqueue `run`'s chain (the claim
    `claim_id` / `claim` stays held for it), or start the rerun requests left for dataset `kick`."""

    answer: dict
    run: Pass | None = None
    claim_id: uuid.UUID | None = None
    claim: Claim | None = None
    kick: uuid.UUID | None = None


class Claiming:
    def __init__(self, unit_of_work: UnitOfWork, claims: Claims, policy: Policy, probe: Probe):
        self.uow, self.claims, self.policy, self.probe = unit_of_work, claims, policy, probe

    def start(self, dataset_id: uuid.UUID, session_ids: Sequence[str], trigger: str, *,
              max_llm_calls: int | None = None, max_tokens: int | None = None, node: str | None = None) -> Step:
        """Claim every key or none; held by another → a rerun request; else the first pass. `node`:
        the claiming worker's node name, recorded in the holder."""
        sessions = sorted(set(session_ids))
        scopes = fence_scopes(dataset_id, sessions)
        with self.uow() as uow:
            floor = uow.improve.fence_floor(scopes)
        got = self.claims.claim(self.claims.keys(dataset_id, sessions), self.policy.lease_seconds, floor,
                                info={"trigger": trigger, **({"node": node} if node else {})})
        result = ImproveResult(status="busy", dataset_id=dataset_id, session_ids=sessions)
        if isinstance(got, Busy):
            return self._rerun_requested(result, f"held by {self.claims.describe(got.holder)}")
        claim_id = uuid.uuid4()
        try:
            with self.uow() as uow:
                uow.improve.check_fence(scopes, got.fence)
                uow.improve.ensure_sessions(dataset_id, sessions)
                uow.improve.create_claim(claim_id, dataset_id, sessions, got.fence, got.keys, got.value, trigger)
                uow.improve.mark_improving(dataset_id, sessions)
        except FencedOut:  # our lease lapsed before we could even record it
            return self._rerun_requested(result, "claim lost before it started")
        except Exception:
            self.claims.release(got)
            raise
        budget = {"max_llm_calls": self.policy.max_llm_calls if max_llm_calls is None else max_llm_calls,
                  "max_tokens": self.policy.max_tokens if max_tokens is None else max_tokens}
        run = self._first_pass(claim_id, got, trigger, budget)
        result.status = "started" if run.status == "running" else "no_op"
        result.run_id, result.claim_id, result.fence = run.run_id, claim_id, got.fence
        if run.status != "running":
            return Step(result.model_dump(mode="json"), kick=self.release(claim_id, got))
        return Step(result.model_dump(mode="json"), run=run, claim_id=claim_id, claim=got)

    def _rerun_requested(self, result: ImproveResult, reason: str) -> Step:
        with self.uow() as uow:
            uow.improve.request_rerun(result.dataset_id, result.session_ids)
        result.rerun_requested, result.reason = True, reason
        return Step(result.model_dump(mode="json"))

    def _first_pass(self, claim_id: uuid.UUID, claim: Claim, trigger: str, budget: dict) -> Pass:
        try:
            return self.begin_pass(claim_id, claim, trigger, budget)
        except Exception:
            self.release(claim_id, claim)  # the keys go; nobody else's requests are handed on
            raise

    def begin_pass(self, claim_id: uuid.UUID, claim: Claim, trigger: str, budget: dict) -> Pass:
        """Snapshot the pending work (consuming rerun requests) and open the pass's run."""
        run_id = uuid.uuid4()
        with self.uow() as uow:
            row = uow.improve.claim(claim_id, lock=True)
            dataset, sessions = row["dataset_id"], list(row["session_ids"])
            uow.improve.check_fence(fence_scopes(dataset, sessions), claim.fence)
            pass_no = uow.improve.count_pass(claim_id)
            uow.improve.consume_reruns(dataset, sessions)
            snapshot = self.probe(uow, dataset, sessions, True)
            stages = list(IMPROVE.stages) if snapshot["pending"] else []
            status = "running" if stages else "no_op"
            uow.runs.open(run_id, IMPROVE.name, [s.name for s in stages], dataset=dataset, status=status,
                          fatal=[s.name for s in stages if s.fatal],
                          claim={"claim_id": claim_id, "pass": pass_no, "session_ids": sessions,
                                 "fence": claim.fence, "trigger": trigger, "snapshot": snapshot, "budget": budget})
        return Pass(run_id, status, [s.name for s in stages])

    def finish(self, run_id: uuid.UUID) -> Step:
        """Close the pass; another one when new work arrived (up to max_passes), else release."""
        with self.uow() as uow:
            run = uow.runs.flow_run(run_id, IMPROVE.name, lock=True)
            if run is None:
                raise UnknownRun(f"improve run {run_id} does not exist")
            if run["status"] != "running":
                return Step({"run_id": str(run_id), "status": run["status"], "redelivered": True})
            stages = uow.runs.stages(run_id)
            status = registry.status_from_stages(stages)
            failed = [f"{r['stage']}: {r['error']}" for r in stages if r["status"] == "failed"]
            uow.runs.finish_run(run_id, status, error="; ".join(failed) or None)
            claim_row = uow.improve.claim(run["claim_id"])
            more = self._more_work(uow, run)
        out = {"run_id": str(run_id), "status": status, "pass": run["pass"]}
        if status == "lost" or claim_row["status"] != "held":
            return Step(out)
        claim = claim_of(claim_row, self.policy.lease_seconds)
        if not self.claims.renew(claim):
            with self.uow() as uow:
                uow.improve.close_claim(claim_row["id"], "lost", note="lease expired between stages")
                uow.improve.request_rerun(run["dataset_id"], list(run["session_ids"]))
            return Step({**out, "claim": "lost"})
        if more and status in ("completed", "completed_with_errors") and claim_row["passes"] < self.policy.max_passes:
            following = self._first_pass(claim_row["id"], claim, run["trigger"], run["budget"])
            if following.status == "running":
                return Step({**out, "next_run_id": str(following.run_id)}, run=following, claim_id=claim_row["id"],
                            claim=claim)
        return Step({**out, "claim": "released"}, kick=self.release(claim_row["id"], claim))

    def _more_work(self, uow, run: dict) -> bool:
        """New work for the holder's next pass: entries, feedback or traces, or a rerun request."""
        sessions = list(run["session_ids"])
        return bool(self.probe(uow, run["dataset_id"], sessions, False)["pending"] or any(
            r["rerun_requested_at"] is not None for r in uow.improve.sessions(run["dataset_id"], sessions)
        ) or (uow.improve.dataset_state(run["dataset_id"]) or {}).get("rerun_requested_at") is not None)

    def release(self, claim_id: uuid.UUID, claim: Claim) -> uuid.UUID:
        """Record the release and free the keys; returns the claim's dataset."""
        with self.uow() as uow:
            uow.improve.close_claim(claim_id, "released")
            dataset = uow.improve.claim(claim_id)["dataset_id"]
        self.claims.release(claim)
        return dataset

    def abandon(self, step: Step, error: Exception) -> None:
        """The pass's chain could not be enqueued: its run fails (never left running with no chain
        to finish it) and the claim is released."""
        with self.uow() as uow:
            uow.runs.finish_run(step.run.run_id, "failed", error=f"could not enqueue: {error}")
        self.release(step.claim_id, step.claim)

    def reruns(self, dataset_id: uuid.UUID | None = None) -> dict[uuid.UUID, list[str]]:
        """Leftover rerun requests (of one dataset, or all) as one improve per dataset: its sessions."""
        with self.uow() as uow:
            requests = uow.improve.rerun_requests()
        by_dataset: dict[uuid.UUID, set[str]] = {}
        for r in requests:
            if dataset_id is None or r["dataset_id"] == dataset_id:
                by_dataset.setdefault(r["dataset_id"], set()).update([r["session_id"]] if r["session_id"] else [])
        return {dataset: sorted(sessions) for dataset, sessions in by_dataset.items()}

    def expire_claims(self) -> list[uuid.UUID]:
        """Held claims whose holder stopped renewing them for a whole lease AND whose keys no longer
        carry their value (a slow but live holder is never swept): abandoned, their open runs
        lost, a rerun requested for their sessions."""
        expired = []
        with self.uow() as uow:
            for row in uow.improve.stale_claims(self.policy.lease_seconds):
                if self.claims.held(claim_of(row, self.policy.lease_seconds)):
                    continue
                uow.improve.close_claim(row["id"], "abandoned", note="lease expired without release")
                for run in uow.improve.open_runs_of_claim(row["id"]):
                    uow.runs.finish_run(run["id"], "lost", error="claim abandoned (lease expired)")
                uow.improve.request_rerun(row["dataset_id"], list(row["session_ids"]))
                expired.append(row["id"])
        return expired
