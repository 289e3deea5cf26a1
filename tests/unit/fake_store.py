"""An in-memory unit of work for use-case tests (the repositories a use case reaches, kept in
dicts): the intake rule (test_intake.py) and improve claiming (test_improve_claiming.py)."""

from __future__ import annotations

import contextlib
import itertools
import uuid

from engram.pipelines import ids
from engram.pipelines.improve.claiming import Busy, Claim, FencedOut


class FakeGraph:
    def __init__(self):
        self.items: dict[uuid.UUID, dict] = {}

    def add_items(self, dataset, items, *, node_sets=(), importance=0.5):
        out = []
        for it in items:
            item_id = ids.data_item_id(dataset, it["digest"])
            created = item_id not in self.items
            self.items.setdefault(item_id, dict(it, node_sets=list(node_sets), importance=importance))
            out.append((item_id, created))
        return out


class FakeRuns:
    """pipeline_runs / stage_runs: every flow's runs, in creation order."""

    def __init__(self):
        self.rows: list[dict] = []

    def latest_for_item(self, item_id):
        mine = [r for r in self.rows if r["data_item_id"] == item_id]
        return dict(mine[-1]) if mine else None

    def _row(self, run_id):
        return next(r for r in self.rows if r["id"] == run_id)

    def stages(self, run_id):
        return [dict(s) for s in self._row(run_id)["stages"]]

    def reopen(self, run_id):
        row = self._row(run_id)
        for s in row["stages"]:
            if s["status"] in ("failed", "running"):
                s["status"] = "pending"
        row["status"] = "pending"
        return [s["stage"] for s in row["stages"] if s["status"] == "pending"]

    def open(self, run_id, pipeline, stages, *, dataset, data_item=None, params=None, done=None, status="pending",
             fatal=(), claim=None):
        self.create_many([{"id": run_id, "pipeline": pipeline, "stages": stages, "dataset": dataset,
                           "data_item": data_item, "params": params, "done": done or {}, "status": status,
                           "fatal": fatal, "claim": claim}])

    def create_many(self, runs):
        for r in runs:
            done = r.get("done") or {}
            self.rows.append({
                "id": r["id"], "pipeline": r.get("pipeline"), "dataset_id": r.get("dataset"),
                "data_item_id": r["data_item"], "status": r.get("status") or "pending", "params": r["params"],
                "done": done, "error": None, "finished": all(s in done for s in r["stages"]),
                **(r.get("claim") or {}),
                "stages": [{"stage": s, "status": "completed" if s in done else "pending",
                            "fatal": s in set(r.get("fatal") or ()), "error": None, "reason": None,
                            "output": done.get(s)} for s in r["stages"]]})

    def flow_run(self, run_id, flow, lock=False):
        row = next((r for r in self.rows if r["id"] == run_id and r.get("pipeline") == flow), None)
        return None if row is None else {k: v for k, v in row.items() if k != "stages"}

    def finish_stage(self, run_id, stage, status, *, output=None, error=None, reason=None, usage=None):
        row = next(s for s in self._row(run_id)["stages"] if s["stage"] == stage)
        row.update(status=status, output=output, error=error, reason=reason)

    def finish_run(self, run_id, status, error=None):
        self._row(run_id).update(status=status, error=error, finished=True)


class FakeAccess:
    def __init__(self, own: set[str] = frozenset()):
        self.own = set(own)

    def find_own(self, name, user):
        return ids.dataset_id(ids.user_id(user), name) if name in self.own else None

    def create_dataset(self, owner, name):
        self.own.add(name)
        return ids.dataset_id(ids.user_id(owner), name)

    def authorise(self, name, user, permission):
        if name not in self.own:
            raise LookupError(f"dataset {name!r} does not exist for user {user!r}")
        return ids.dataset_id(ids.user_id(user), name)


class FakeImprove:
    """Fences, session and dataset improve state, claim rows (adapters/store/improve.py)."""

    def __init__(self, runs: FakeRuns):
        self.runs = runs
        self.fences: dict[str, int] = {}
        self.reruns: set[tuple[uuid.UUID, str | None]] = set()  # (dataset, session or None: the dataset's)
        self.improving: list[tuple[uuid.UUID, list[str]]] = []
        self.claims: dict[uuid.UUID, dict] = {}
        self.stale: set[uuid.UUID] = set()  # claims whose holder stopped renewing their row

    def fence_floor(self, scopes):
        return max([self.fences.get(s, 0) for s in scopes] + [0])

    def check_fence(self, scopes, fence):
        stale = sorted(s for s in set(scopes) if self.fences.get(s, 0) > fence)
        if stale:
            raise FencedOut(f"fencing number {fence} is stale for {', '.join(stale)}: the claim was taken over")
        self.fences.update({s: fence for s in scopes})

    def ensure_sessions(self, dataset_id, session_ids):
        pass

    def mark_improving(self, dataset_id, session_ids, auto=False):
        self.improving.append((dataset_id, list(session_ids)))

    def request_rerun(self, dataset_id, session_ids):
        self.reruns |= {(dataset_id, s) for s in session_ids} if session_ids else {(dataset_id, None)}

    def consume_reruns(self, dataset_id, session_ids):
        self.reruns = {(d, s) for d, s in self.reruns if not (d == dataset_id and (s is None or s in session_ids))}

    def rerun_requests(self, limit=500):
        return [{"dataset_id": d, "session_id": s} for d, s in sorted(self.reruns, key=str)][:limit]

    def sessions(self, dataset_id, session_ids=None):
        return [{"session_id": s, "rerun_requested_at": "now" if (dataset_id, s) in self.reruns else None}
                for s in session_ids or []]

    def dataset_state(self, dataset_id):
        return {"rerun_requested_at": "now" if (dataset_id, None) in self.reruns else None}

    def create_claim(self, claim_id, dataset_id, session_ids, fence, keys, value, trigger):
        self.claims[claim_id] = {"id": claim_id, "dataset_id": dataset_id, "session_ids": list(session_ids),
                                 "fence": fence, "claim_keys": list(keys), "claim_value": value, "trigger": trigger,
                                 "status": "held", "passes": 0, "note": None}

    def claim(self, claim_id, lock=False):
        return dict(self.claims[claim_id]) if claim_id in self.claims else None

    def close_claim(self, claim_id, status, note=None):
        if self.claims[claim_id]["status"] == "held":
            self.claims[claim_id].update(status=status, note=note)

    def count_pass(self, claim_id):
        self.claims[claim_id]["passes"] += 1
        return self.claims[claim_id]["passes"]

    def stale_claims(self, lease_seconds):
        return [dict(c) for c in self.claims.values() if c["status"] == "held" and c["id"] in self.stale]

    def open_runs_of_claim(self, claim_id):
        return [r for r in self.runs.rows if r.get("claim_id") == claim_id and r["status"] == "running"]


class FakeUnitOfWork:
    def __init__(self, own: set[str] = frozenset()):
        self.graph, self.runs, self.access = FakeGraph(), FakeRuns(), FakeAccess(own)
        self.improve = FakeImprove(self.runs)

    @contextlib.contextmanager
    def __call__(self):
        """A unit of work factory over the same rows (as Store().unit_of_work)."""
        yield self


class FakeClaims:
    """The Claims port in memory: every key or none, fencing numbers never below the floor, and
    `expire` for a lease that ran out."""

    def __init__(self):
        self.values: dict[str, str] = {}
        self.fence = 0
        self._tokens = itertools.count(1)

    def keys(self, dataset_id, session_ids):
        return sorted(f"session:{dataset_id}:{s}" for s in set(session_ids)) + [f"dataset:{dataset_id}"]

    def claim(self, keys, lease_seconds, floor=0, info=None):
        for key in keys:
            if key in self.values:
                return Busy(key=key, holder=self.values[key])
        self.fence = max(self.fence, floor) + 1
        value = f"t{next(self._tokens)}|{self.fence}|{{}}"
        self.values.update({k: value for k in keys})
        return Claim(keys=tuple(keys), value=value, fence=self.fence, lease_ms=int(lease_seconds * 1000))

    def held(self, claim):
        return all(self.values.get(k) == claim.value for k in claim.keys)

    def renew(self, claim):
        return self.held(claim)

    def release(self, claim):
        mine = [k for k in claim.keys if self.values.get(k) == claim.value]
        for key in mine:
            del self.values[key]
        return len(mine)

    def expire(self, claim):
        for key in claim.keys:
            if self.values.get(key) == claim.value:
                del self.values[key]

    def describe(self, value):
        token, fence, _ = value.split("|", 2)
        return {"token": token, "fence": int(fence)}
