"""The periodic schedule, nothing else. Each entry expires with its period, so a backlog of
missed ticks never piles up behind a stopped worker."""

from __future__ import annotations


def beat_schedule(settings) -> dict:
    sweep = 60.0
    return {
        "sweep-abandoned-runs": {
            "task": "engram.maintenance.sweep_runs",
            "schedule": sweep,
            "options": {"expires": sweep, "queue": settings.queue_maintenance},
        },
    }
