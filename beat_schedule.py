"""The periodic schedule, nothing else. Each entry expires with its period, so a backlog of
missed ticks never piles up behind a stopped worker."""

from __future__ import annotations


def beat_schedule(settings) -> dict:
    sweep = 60.0
    schedule = {
        "sweep-abandoned-runs": {
            "task": "engram.maintenance.sweep_runs",
            "schedule": sweep,
            "options": {"expires": sweep, "queue": settings.queue_maintenance},
        },
        "vector-indexes": {
            "task": "engram.maintenance.vector_indexes",
            "schedule": settings.vector_index_sweep_seconds,
            "options": {"expires": settings.vector_index_sweep_seconds, "queue": settings.queue_maintenance},
        },
    }
    schedule.update(_improve_entries(settings))
    return schedule


def _improve_entries(settings) -> dict:
    # Quiet sessions with pending entries older than T, leftover rerun requests, dead claims.
    every = settings.improve_sweep_seconds
    tasks = {
        "improve-quiet-sessions": "engram.improve.sweep_quiet_sessions",
        "improve-rerun-requests": "engram.improve.sweep_reruns",
        "improve-expired-claims": "engram.improve.sweep_claims",
        # Truth bases of datasets whose lessons changed (a no-op unless build_truth_subspace is on).
        "improve-truth-subspace": "engram.improve.sweep_truth",
    }
    return {
        name: {"task": task, "schedule": every, "options": {"expires": every, "queue": settings.queue_maintenance}}
        for name, task in tasks.items()
    }
