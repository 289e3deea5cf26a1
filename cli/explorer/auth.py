"""Who is asking: a bearer token of the `engram mcp --http` token map (the Authorization header,
for scripts), or a session cookie a login with such a token opened (for a browser).

Sessions live in this process (a restart logs everyone out); the cookie holds a random session
id, never the token, and is HttpOnly and SameSite=Strict."""

from __future__ import annotations

import hmac
import secrets
import threading
import time

COOKIE = "engram_explorer"
SESSION_SECONDS = 12 * 3600


class Authority:
    """The token -> user map and the open sessions."""

    def __init__(self, tokens: dict[str, str]):
        if not tokens:
            raise ValueError("the explorer needs a token map: a JSON file of token -> user name (--tokens)")
        self.tokens = dict(tokens)
        self._sessions: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def user_of_token(self, token: str | None) -> str | None:
        """The token's user; every token is compared in constant time."""
        found = None
        for known, user in self.tokens.items():
            if token and hmac.compare_digest(known.encode(), token.encode()):
                found = user
        return found

    def open_session(self, user: str) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[sid] = (user, time.monotonic() + SESSION_SECONDS)
        return sid

    def close_session(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)

    def user_of_session(self, sid: str | None) -> str | None:
        with self._lock:
            user, expires = self._sessions.get(sid or "", (None, 0.0))
            if user is not None and expires < time.monotonic():
                self._sessions.pop(sid, None)
                return None
        return user

    def user_of(self, request) -> str | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            return self.user_of_token(header[7:].strip())
        return self.user_of_session(request.cookies.get(COOKIE))


def safe_next(target: str | None) -> str:
    """Where a login goes next: a path of this app only (never another site)."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"
