"""`engram mcp`: Engram's tools for MCP clients (official `mcp` SDK), over stdio or
streamable HTTP bound to localhost.

Every tool builds the task's own pydantic payload (so the same validation and the same clear
errors apply), enqueues the Celery task and waits for it with a timeout. The user is never
an argument: it is the server's configured user, or on HTTP the user the bearer token maps to.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from engram.models.agentic import SkillListRequest
from engram.models.payloads import (
    CaptureReprocessRequest,
    CaptureRequest,
    CaptureStatus,
    DatasetsRequest,
    EntityRequest,
    FeedbackRequest,
    ForgetRequest,
    GraphRequest,
    LinkRequest,
    ListRequest,
    ReadRequest,
    RecallRequest,
    RememberRequest,
    RunStatus,
    SessionsRequest,
    StatusRequest,
)
from engram.models.payloads.export import ExportRequest
from engram.pipelines.browse import next_offset, text_page
from engram.pipelines.errors import BadInput
from engram.tasks.client import EngramError, RunHandle
import functools
import inspect

TOOLS = ("remember", "recall", "capture", "capture_reprocess", "status", "forget", "feedback", "sessions", "link",
         "read", "list", "entity", "graph", "datasets", "skills_list", "skill_load", "export")


class Authority:
    """Who is asking: one configured user per server instance, or a token → user map (HTTP)."""

    def __init__(self, user: str | None = None, tokens: dict[str, str] | None = None):
        if not user and not tokens:
            raise ValueError("configure the MCP server's user (--user) or a token → user map (--tokens)")
        self.user = user
        self.tokens = dict(tokens or {})

    @classmethod
    def from_file(cls, path: Path) -> Authority:
        try:
            tokens = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"token map {path}: {exc}") from None
        if not isinstance(tokens, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tokens.items()):
            raise ValueError(f"token map {path} must be a JSON object of token → user name")
        return cls(tokens=tokens)

    def current_user(self) -> str:
        if not self.tokens:
            return self.user
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        if token is None:  # the SDK's bearer middleware refuses such requests before here
            raise PermissionError("no bearer token")
        return token.client_id


class ToolFailed(Exception):
    pass


def _describe(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'payload'}: {e['msg']}" for e in exc.errors())


class EngramTools:
    """The tools' bodies (blocking: each runs on a worker thread of the server)."""

    def __init__(self, authority: Authority, client, timeout: float):
        self.authority = authority
        self.client = client
        self.timeout = timeout

    def payload(self, model: type[BaseModel], **fields) -> dict:
        fields = {k: v for k, v in fields.items() if v is not None}
        fields["user"] = self.authority.current_user()
        try:
            model.model_validate(fields)  # the task validates again; a bad call never leaves this process
        except ValidationError as exc:
            raise ToolFailed(f"invalid arguments: {_describe(exc)}") from None
        return fields

    def call(self, task: str, payload: dict) -> dict:
        try:
            return self.client.call(task, **payload)
        except EngramError as exc:
            raise ToolFailed(str(exc)) from None
        except TimeoutError:
            raise ToolFailed(f"{task} did not answer within {self.timeout:.0f}s (it may still finish)") from None

    def wait_run(self, run_id: str) -> RunStatus:
        try:
            return RunHandle(self.client, uuid.UUID(run_id), user=self.authority.current_user()).wait(
                timeout=self.timeout)
        except TimeoutError as exc:
            raise ToolFailed(str(exc)) from None

    # ------------------------------------------------------------ tools

    def remember(self, dataset: str, content: str | None = None, session_id: str | None = None,
                 question: str | None = None, answer: str | None = None, context: str | None = None,
                 node_sets: list[str] | None = None, wait: bool = True) -> dict:
        payload = self.payload(RememberRequest, dataset=dataset, content=content, session_id=session_id,
                               question=question, answer=answer, context=context, node_sets=node_sets,
                               create_dataset=True)
        out = self.call("engram.remember", payload)
        if wait and out.get("status") == "accepted":
            out["runs"] = [self.wait_run(r["run_id"]).model_dump(mode="json") for r in out["runs"]]
        return out

    def recall(self, question: str, datasets: list[str] | None = None, search_type: str | None = None,
               top_k: int = 10, session_id: str | None = None, node_sets: list[str] | None = None,
               as_of: str | None = None, include_history: bool = False, object_types: list[str] | None = None,
               project: str | None = None, tags: list[str] | None = None) -> dict:
        payload = self.payload(RecallRequest, question=question, datasets=datasets, search_type=search_type,
                               top_k=top_k, session_id=session_id, node_sets=node_sets, as_of=as_of,
                               include_history=include_history or None, object_types=object_types,
                               project=project, tags=tags)
        return self.call("engram.recall", payload)

    def capture(self, dataset: str, title: str, content: str = "", type: str | None = None, project: str = "",
                tags: list[str] | None = None, template: str | None = None,
                template_fields: dict[str, str] | None = None, summary: str | None = None,
                entities: list | str | None = None, properties: dict | str | None = None,
                run_pipeline: bool = True, wait: bool = True) -> dict:
        payload = self.payload(CaptureRequest, dataset=dataset, title=title, content=content, type=type,
                               project=project, tags=tags, template=template, template_fields=template_fields,
                               summary=summary, entities=entities, properties=properties,
                               run_pipeline=run_pipeline, create_dataset=True, captured_by="mcp")
        return self._settled(self.call("engram.capture", payload), wait)

    def capture_reprocess(self, dataset: str, object_id: str, wait: bool = True) -> dict:
        payload = self.payload(CaptureReprocessRequest, dataset=dataset, object_id=object_id)
        return self._settled(self.call("engram.capture.reprocess", payload), wait)

    def _settled(self, out: dict, wait: bool) -> dict:
        """With wait, a capture's answer carries how its run ended: complete or partial, per stage."""
        if wait and out.get("run_id"):
            status = CaptureStatus.of(uuid.UUID(out["object_id"]), self.wait_run(out["run_id"]))
            out |= {"status": status.status, "stages": [s.model_dump(mode="json") for s in status.stages]}
        return out

    def status(self, run_id: str | None = None, dataset: str | None = None, limit: int = 20) -> dict:
        return self.call("engram.status", self.payload(StatusRequest, run_id=run_id, dataset=dataset, limit=limit))

    def forget(self, dataset: str, data_item_id: str | None = None) -> dict:
        return self.call("engram.forget", self.payload(ForgetRequest, dataset=dataset, data_item_id=data_item_id))

    def feedback(self, entry_id: str, feedback: str, score: float | None = None) -> dict:
        return self.call("engram.feedback", self.payload(FeedbackRequest, entry_id=entry_id, feedback=feedback,
                                                         score=score))

    def sessions(self, dataset: str, session_id: str | None = None) -> dict:
        return self.call("engram.sessions", self.payload(SessionsRequest, dataset=dataset, session_id=session_id))

    def link(self, dataset: str, source: str, target: str, predicate: str, confidence: float = 1.0,
             note: str = "") -> dict:
        return self.call("engram.link", self.payload(LinkRequest, dataset=dataset, source=source, target=target,
                                                     predicate=predicate, confidence=confidence, note=note))

    def read(self, dataset: str, id: str, offset: int = 0, max_chars: int = 20_000) -> dict:
        return self.call("engram.read", self.payload(ReadRequest, dataset=dataset, id=id, offset=offset,
                                                     max_chars=max_chars))

    def list_items(self, dataset: str, kind: str = "objects", type: str | None = None, project: str | None = None,
                   tag: str | None = None, offset: int = 0, limit: int = 20) -> dict:
        return self.call("engram.list", self.payload(ListRequest, dataset=dataset, kind=kind, type=type,
                                                     project=project, tag=tag, offset=offset, limit=limit))

    def entity(self, dataset: str, entity: str, limit: int = 100) -> dict:
        return self.call("engram.entity", self.payload(EntityRequest, dataset=dataset, entity=entity, limit=limit))

    def graph(self, dataset: str, entity: str, depth: int = 2, limit: int = 100,
              include_history: bool = False) -> dict:
        return self.call("engram.graph", self.payload(GraphRequest, dataset=dataset, entity=entity, depth=depth,
                                                      limit=limit, include_history=include_history))

    def datasets(self) -> dict:
        return self.call("engram.datasets", self.payload(DatasetsRequest))

    def skills_list(self, dataset: str, offset: int = 0, limit: int = 20) -> dict:
        if offset < 0 or not 1 <= limit <= 200:
            raise ToolFailed("invalid arguments: offset must be >= 0 and limit 1..200")
        out = self.call("engram.skills.list", self.payload(SkillListRequest, dataset=dataset))
        skills = out["skills"]
        page = [{"name": s["name"], "description": s["description"], "tools": s["tools"]}
                for s in skills[offset:offset + limit]]
        return {"dataset": dataset, "skills": page, "total": len(skills),
                "next_offset": next_offset(offset, len(page), len(skills)), "tools": out["tools"]}

    def skill_load(self, dataset: str, name: str, offset: int = 0, max_chars: int = 8000) -> dict:
        if offset < 0 or not 1 <= max_chars <= 200_000:
            raise ToolFailed("invalid arguments: offset must be >= 0 and max_chars 1..200000")
        out = self.call("engram.skills.list", self.payload(SkillListRequest, dataset=dataset, skill=name))
        if not out["skills"]:
            raise ToolFailed(f"no skill {name!r} in dataset {dataset!r}")
        [skill] = out["skills"]
        try:
            procedure, more = text_page(skill["procedure"], offset, max_chars)
        except BadInput as exc:
            raise ToolFailed(str(exc)) from None
        return {"dataset": dataset, "name": skill["name"], "description": skill["description"],
                "tools": skill["tools"], "procedure": procedure, "procedure_chars": len(skill["procedure"]),
                "next_offset": more, "earlier_procedures": len(skill["earlier_procedures"]),
                "recent_runs": out["runs"][:5]}

    def export(self, dataset: str, cursor: str = "", limit: int = 100) -> dict:
        # `cursor: str`, not `str | None`: the SDK json-parses a string argument of any other type,
        # and a cursor is a JSON text that must reach the task as it was given.
        return self.call("engram.export", self.payload(ExportRequest, dataset=dataset, cursor=cursor or None,
                                                       limit=limit))


METHODS = {"list": "list_items"}  # tool name -> EngramTools method where the name is a builtin

DESCRIPTIONS = {
    "remember": "Store text in a dataset and build its memory graph (or, with session_id and "
                "question/answer, store a session turn). Use it for documents and notes worth recalling later; "
                "node_sets tags the text so recall can be restricted to it. "
                "Waits for processing unless wait=false.",
    "recall": "Ask memory a question; start here when you need to know something. Optional: datasets, "
              "search_type, top_k, session_id; node_sets restricts to items remembered in those node sets; "
              "as_of (ISO date or time) answers as things stood then; include_history also returns superseded "
              "and ended facts; object_types, project, tags search captured knowledge objects "
              "(search type CAPTURES).",
    "capture": "Capture a typed knowledge object (decision, lesson, fix, session, research, source, "
               "synthesis, idea) with optional template (session, fix, decision, lesson, research, idea) and "
               "template_fields, summary (skips classification), entities [{name, type}] "
               "(technology, project, pattern, concept) and properties. Returns complete or partial.",
    "capture_reprocess": "Repair a partial capture: rerun a captured object's pipeline from its first failed "
                         "stage with the original request (a complete one reruns every stage). Use it when "
                         "capture or status said partial. Returns complete or partial again.",
    "status": "Per-stage status of a run (run_id) or of a dataset's recent runs (dataset). A capture run whose "
              "optional stage failed is partial: the object is stored, capture_reprocess can complete it.",
    "forget": "Forget a dataset, or one data item / captured object of it (data_item_id).",
    "feedback": "Mark a session entry helpful or harmful (optional score 0..1).",
    "sessions": "List a dataset's sessions (or one session) with their improve state.",
    "link": "State a typed link between two captured objects or entities of a dataset (each an id or a name) "
            "when you know they are related and capture did not link them. predicate: causedBy, "
            "contradicts, supports, supersedes, dependsOn, ledTo, implements or mentions. Stored with "
            "origin caller; linking again updates it.",
    "read": "Read one captured object or document by id (ids come from recall, list or entity): its text "
            "(paged: offset, max_chars; next_offset says where more starts), its links and the facts it states.",
    "list": "Browse a dataset: kind objects (captured objects; filter by type, project, tag) or documents "
            "(filter by type = document type, tag = node set), newest first, paged with offset and limit "
            "(next_offset). Use it to see what is there rather than to answer a question.",
    "entity": "An entity's dossier (by name or id): its facts split current and superseded/ended, each with "
              "validity intervals and the documents it comes from, plus contradictions among them. Use it to "
              "check what is known about one thing and whether it changed.",
    "graph": "The neighbourhood of an entity (by name or id) to depth 1 or 2: nodes and fact edges, at most "
             "limit edges (truncated says so). Current facts only unless include_history. Use it to explore "
             "what an entity connects to.",
    "datasets": "The datasets you can use: own or shared, your permissions on each, and how many documents, "
                "objects, entities and facts each holds. Call it first when you do not know a dataset's name.",
    "skills_list": "A dataset's stored skills (name, description, tools), paged with offset and limit, and "
                   "the tools they may call. Load one with skill_load.",
    "skill_load": "Load one skill's procedure by name (paged: offset, max_chars; next_offset says where more "
                  "starts) with its tools and recent runs, to follow it step by step.",
    "export": "Export a dataset whole (read grant), one page per call, to back it up, move it to another "
              "deployment or process every row yourself; to answer a question use recall, to browse use list. "
              "The first call (no cursor) returns the header (format, version, row counts per table) and the "
              "first records {table, row}, in file order (rows include their vectors); pass the returned "
              "cursor back, as given, for the next page until it is null. limit: records per page (1..5000, default 100). "
              "Header then records, one JSON object a line, is the file engram import reads.",
}


def build_server(tools: EngramTools, *, auth=None, token_verifier=None):
    """The MCPServer with every tool; each body runs on a thread (Celery waits block)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("engram", instructions="Engram memory: remember, recall, capture knowledge objects.",
                       auth=auth, token_verifier=token_verifier)

    def expose(name: str, body: Callable[..., Any]) -> None:
        async def tool(**kwargs):
            try:
                return await anyio.to_thread.run_sync(lambda: body(**kwargs))
            except (ToolFailed, PermissionError) as exc:
                raise ToolError(str(exc)) from None


        functools.update_wrapper(tool, body)
        tool.__signature__ = inspect.signature(body)
        server.add_tool(tool, name=name, description=DESCRIPTIONS[name], structured_output=False)

    for name in TOOLS:
        expose(name, getattr(tools, METHODS.get(name, name)))
    return server


def token_auth(tokens: dict[str, str], host: str, port: int):
    """(AuthSettings, verifier): bearer tokens checked against the map; the token's user is its client id."""
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings

    class MapVerifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            user = tokens.get(token)
            return AccessToken(token=token, client_id=user, scopes=[]) if user else None

    url = f"http://{host}:{port}"
    return AuthSettings(issuer_url=url, resource_server_url=f"{url}/mcp"), MapVerifier()
