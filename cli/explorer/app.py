"""The Starlette app: login and logout, static assets, and the wrapper every page goes through
(who is asking, the task's refusal as 401/403/404/400, HTML or JSON by the Accept header)."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from engram.cli.explorer.auth import COOKIE, SESSION_SECONDS, Authority, safe_next
from engram.cli.explorer.reader import Reader, Refused

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.filters["pretty"] = lambda value: json.dumps(value, indent=1, ensure_ascii=False, default=str)
# vis-network as the pyvis wheel ships it (a maintained package from PyPI; nothing copied here).
VIS_FILES = {"vis-network.min.js": "application/javascript", "vis-network.css": "text/css"}
VIS_DIR = ("lib", "vis-9.1.2")


def wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def respond(request: Request, template: str, data: dict, *, status: int = 200, **html) -> Response:
    """The page's data as JSON, or rendered (with `html`: what only the page needs)."""
    if wants_json(request):
        return JSONResponse(data, status_code=status)
    return templates.TemplateResponse(request, template, {"data": data, **html}, status_code=status)


def refused(request: Request, refusal: Refused, user: str | None) -> Response:
    return respond(request, "error.html", {"error": refusal.message, "status": refusal.status},
                   status=refusal.status, user=user)


def page(template: str) -> Callable:
    """A page: the logged-in user (else 401 / the login form), the body's data, then HTML or JSON.

    The body returns its data, or (data, extra) where `extra` holds what only the HTML needs."""

    def decorate(body: Callable) -> Callable:
        def endpoint(request: Request) -> Response:
            user = request.app.state.authority.user_of(request)
            if user is None:
                if wants_json(request):
                    return JSONResponse({"error": "log in: a bearer token or the session cookie"}, status_code=401)
                here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/login?next={quote(here)}", status_code=303)
            try:
                out = body(request, user)
            except Refused as refusal:
                return refused(request, refusal, user)
            data, extra = out if isinstance(out, tuple) else (out, {})
            return respond(request, template, data, user=user, **extra)

        endpoint.__name__ = body.__name__
        return endpoint

    return decorate


async def login(request: Request) -> Response:
    authority: Authority = request.app.state.authority
    target = safe_next(request.query_params.get("next"))
    if request.method == "GET":
        return templates.TemplateResponse(request, "login.html", {"next": target, "error": None, "user": None})
    if "application/json" in request.headers.get("content-type", ""):
        try:
            token = str((await request.json()).get("token", ""))
        except (ValueError, AttributeError):
            token = ""
    else:
        form = await request.form()
        token, target = str(form.get("token", "")), safe_next(str(form.get("next", "")) or target)
    user = authority.user_of_token(token.strip())
    if user is None:
        if wants_json(request):
            return JSONResponse({"error": "unknown token"}, status_code=401)
        return templates.TemplateResponse(request, "login.html", {"next": target, "error": "Unknown token.",
                                                                  "user": None}, status_code=401)
    response = JSONResponse({"user": user}) if wants_json(request) else RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, authority.open_session(user), max_age=SESSION_SECONDS, httponly=True,
                        samesite="strict", path="/")
    return response


async def logout(request: Request) -> Response:
    request.app.state.authority.close_session(request.cookies.get(COOKIE))
    response = JSONResponse({"user": None}) if wants_json(request) else RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name == "explorer.css":
        return Response((HERE / "static" / name).read_bytes(), media_type="text/css")
    if name in VIS_FILES:
        body = resources.files("pyvis").joinpath(*VIS_DIR, name).read_bytes()
        return Response(body, media_type=VIS_FILES[name], headers={"Cache-Control": "max-age=86400"})
    return Response("not found", status_code=404)


def create_app(client, tokens: dict[str, str]) -> Starlette:
    """The explorer over `client` (an EngramClient: the public tasks), users from `tokens`."""
    from engram.cli.explorer import pages

    routes = [
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/static/{name}", static),
        *pages.ROUTES,
    ]
    app = Starlette(routes=routes)
    app.state.authority = Authority(tokens)
    app.state.reader = Reader(client)
    return app
