"""The explorer's pages: each reads through public tasks as the logged-in user and returns the
data its template renders (and the JSON API returns as is)."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request
from starlette.routing import Route

from engram.cli.explorer import views
from engram.cli.explorer.app import page
from engram.cli.explorer.reader import Reader, Refused
from engram.pipelines.recall.registry import FUSED_PASSAGE_LANES
from engram.models.search import SearchType

PAGE = 50  # documents and objects per page
CHUNKS = 100  # a document's chunks per page
# The graph walk's items are those of the fused ranking with a `via`.
LANES = FUSED_PASSAGE_LANES


def _reader(request: Request) -> Reader:
    return request.app.state.reader


def _int(request: Request, name: str, default: int, low: int = 0, high: int = 10**9) -> int:
    raw = request.query_params.get(name)
    try:
        value = int(raw) if raw not in (None, "") else default
    except ValueError:
        raise Refused(400, f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise Refused(400, f"{name} must be between {low} and {high}")
    return value


@page("datasets.html")
def datasets(request: Request, user: str) -> dict:
    return {"user": user, **_reader(request).call("engram.datasets", user)}


@page("dataset.html")
def dataset(request: Request, user: str) -> dict:
    name, reader = request.path_params["dataset"], _reader(request)
    offset = _int(request, "offset", 0)
    got = reader.many(user, {"datasets": ("engram.datasets", {}),
                             "documents": ("engram.list", {"dataset": name, "kind": "documents", "offset": offset,
                                                           "limit": PAGE}),
                             "runs": ("engram.status", {"dataset": name, "limit": 5})})
    return {"dataset": Reader.pick(got["datasets"], name), "documents": got["documents"],
            "last_runs": views.timeline(got["runs"]["runs"], datetime.now(UTC))}


@page("runs.html")
def runs(request: Request, user: str) -> dict:
    name = request.path_params["dataset"]
    limit = _int(request, "limit", 20, 1, 200)  # the page refreshes every 2 s while a run is live
    status = _reader(request).call("engram.status", user, dataset=name, limit=limit)
    shown = views.timeline(status["runs"], datetime.now(UTC))
    return {"dataset": name, "runs": shown, "queues": status.get("queues"), "live": any(r["live"] for r in shown)}


@page("item.html")
def item(request: Request, user: str) -> tuple[dict, dict]:
    name, ident = request.path_params["dataset"], request.path_params["item"]
    offset = _int(request, "chunk_offset", 0)
    read = _reader(request).call("engram.read", user, dataset=name, id=ident, chunks=CHUNKS, chunk_offset=offset,
                                 facts_limit=1000)
    return {"dataset": name, "item": read}, {"by_chunk": views.facts_by_chunk(read["facts"])}


@page("entity.html")
def entity(request: Request, user: str) -> tuple[dict, dict]:
    name, ref = request.path_params["dataset"], request.path_params["entity"]
    history = request.query_params.get("history", "1") != "0"
    depth = _int(request, "depth", 1, 1, 2)
    got = _reader(request).many(user, {
        "dossier": ("engram.entity", {"dataset": name, "entity": ref, "limit": 200}),
        "graph": ("engram.graph", {"dataset": name, "entity": ref, "depth": depth, "limit": 150,
                                   "include_history": history})})
    dossier, graph = got["dossier"], got["graph"]
    flagged = views.contradicted(dossier)
    drawn = views.vis_graph(graph, flagged)
    return ({"dataset": name, "entity": dossier, "graph": drawn, "contradicted": flagged},
            {"history": history, "depth": depth})


@page("recall.html")
def recall(request: Request, user: str) -> tuple[dict, dict]:
    name, q = request.path_params["dataset"], request.query_params
    form = {"q": q.get("q", ""), "search_type": q.get("search_type", ""), "top_k": _int(request, "top_k", 10, 1, 200),
            "as_of": q.get("as_of", ""), "node_sets": q.get("node_sets", ""), "history": q.get("history") == "1",
            "lanes": q.get("lanes") == "1"}
    result, lanes = None, {}
    if form["q"].strip():
        ask = {"question": form["q"], "datasets": [name], "top_k": form["top_k"],
               "as_of": form["as_of"].strip() or None, "node_sets": views.split_list(form["node_sets"]),
               "include_history": form["history"]}
        calls = {"fused": ("engram.recall", {**ask, "search_type": form["search_type"] or None})}
        if form["lanes"]:  # recall answers its fused ranking only: each passage lane asked on its own
            calls |= {lane: ("engram.recall", {**ask, "search_type": lane}) for lane in LANES}
        asked = _reader(request).many(user, calls)
        result, lanes = asked["fused"], {lane: asked[lane]["items"] for lane in LANES if lane in asked}

    return ({"dataset": name, "query": form, "result": result, "lanes": lanes},
            {"search_types": list(SearchType.__members__)})


@page("objects.html")
def objects(request: Request, user: str) -> dict:
    name, q = request.path_params["dataset"], request.query_params
    offset = _int(request, "offset", 0)
    listed = _reader(request).call("engram.list", user, dataset=name, kind="objects", type=q.get("type") or None,
                                   project=q.get("project") or None, tag=q.get("tag") or None, offset=offset,
                                   limit=PAGE)
    return {"dataset": name, "objects": listed}


@page("skills.html")
def skills(request: Request, user: str) -> dict:
    name = request.path_params["dataset"]
    return {"dataset": name, **_reader(request).call("engram.skills.list", user, dataset=name)}


@page("sessions.html")
def sessions(request: Request, user: str) -> dict:
    name = request.path_params["dataset"]
    return {"dataset": name, **_reader(request).call("engram.sessions", user, dataset=name)}


ROUTES = [
    Route("/", datasets),
    Route("/d/{dataset}", dataset),
    Route("/d/{dataset}/runs", runs),
    Route("/d/{dataset}/items/{item}", item),
    Route("/d/{dataset}/entities/{entity}", entity),
    Route("/d/{dataset}/recall", recall),
    Route("/d/{dataset}/objects", objects),
    Route("/d/{dataset}/skills", skills),
    Route("/d/{dataset}/sessions", sessions),
]
