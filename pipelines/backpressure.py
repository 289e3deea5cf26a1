"""Back-pressure a producer can see: how much work is ahead of an accept, and when it may be done."""

from __future__ import annotations

RATE_WINDOW_SECONDS = 300.0  # completions counted over this window give the fleet's drain rate


def backlog(open_runs: int, finished_in_window: int, new_runs: int, bound: int,
            window_seconds: float = RATE_WINDOW_SECONDS) -> dict | None:
    """None while the open runs are within `bound`; else queued_ahead and eta_s (the estimated
    seconds until this accept's runs are done at the recent drain rate; None with no recent
    completions to measure the rate by)."""
    if open_runs <= bound:
        return None
    rate = finished_in_window / window_seconds
    eta = round((open_runs + new_runs) / rate, 1) if rate > 0 else None
    return {"queued_ahead": open_runs, "eta_s": eta}
