"""`engram flower`: Flower with its /metrics behind the same authentication as its UI.

Flower serves /metrics (its task counters, with Engram's task names and worker host names) to
anyone, even when basic auth or OAuth guards every page. Engram's Flower asks the same
credentials there: without them a scraper gets 401 (basic auth) or the login redirect (OAuth).
"""

from __future__ import annotations


def protect_metrics() -> None:
    """Require Flower's configured authentication on /metrics (idempotent). With no
    authentication configured Flower's pages are open, and /metrics with them."""
    from flower.views.monitor import Metrics
    from tornado.web import authenticated

    if getattr(Metrics.get, "_engram_protected", False):
        return
    get = authenticated(Metrics.get)
    get._engram_protected = True
    Metrics.get = get
