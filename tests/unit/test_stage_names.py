"""A stage is declared once: its name is spelled in its flow's declaration and nowhere else.

Every other module reaches a stage through its declaration (COGNIFY, EXTRACT.name, open_run,
...), so renaming or adding a stage touches one file. Task names derived from a stage
(engram.<namespace>.<stage>) count as spellings too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import engram
from engram.pipelines.flows import FLOWS

ROOT = Path(engram.__file__).parent
SKIP_DIRS = {"tests", ".venv", "migrations", "engram.egg-info", "docker", "build", "dist"}

DECLARE = {"Stage", "_improve"}  # pipelines/improve/flow.py declares its stages through _improve

# A word that is also a stage name but means something else where it appears (never a stage).
HOMONYMS = {
    ("chunk", "pipelines/recall/lanes.py"): "a recall item's kind",
    ("chunk", "pipelines/recall/captures.py"): "a recall item's kind",
    ("chunk", "pipelines/recall/timeline.py"): "a recall item's kind",
    ("chunk", "pipelines/recall/completion.py"): "a recall item's kind",
    ("chunk", "pipelines/capture/flow.py"): "a captured object's vector key",
    ("chunk", "adapters/store/capture.py"): "a captured object's vector key",
    ("chunk", "models/payloads/recall.py"): "a recall item's kind",
    ("link", "cli/mcp_server.py"): "the MCP tool that links two things (engram.link)",
    ("chunk", "pipelines/export.py"): "a GraphML node's kind",
}
# Words too common to check bare: only their task names (engram.<namespace>.<stage>) are checked.
COMMON_WORDS = {"reason": "every status row's `reason` field"}


def _sources():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in SKIP_DIRS:
            continue
        yield rel.as_posix(), ast.parse(path.read_text(), str(path))


def _literals(tree: ast.AST) -> list[str]:
    """String constants that are not docstrings, dict keys or subscripts (field names)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Dict):
            skip.update(id(k) for k in node.keys if k is not None)
        if isinstance(node, ast.Subscript):
            skip.add(id(node.slice))
        if isinstance(node, ast.keyword) and node.arg in ("kind",):
            skip.add(id(node.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def _declared_in(name: str, sources: dict[str, ast.AST]) -> set[str]:
    """The modules that declare a stage of this name: Stage("name", ...) (or a flow's shorthand for it)."""
    out = set()
    for rel, tree in sources.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in DECLARE and node.args \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == name:
                out.add(rel)
    return out


def test_every_stage_name_is_spelled_only_in_its_declaration():
    sources = dict(_sources())
    literals = {rel: _literals(tree) for rel, tree in sources.items()}
    stages = {s.name: s for flow in FLOWS for s in flow.stages}
    problems = []
    for name, stage in sorted(stages.items()):
        home = _declared_in(name, sources)
        assert len(home) == 1, f"stage {name!r} is declared in {sorted(home) or 'no module'}"
        spellings = {stage.task} if name in COMMON_WORDS else {name, stage.task}
        for rel, values in literals.items():
            if rel in home or (name, rel) in HOMONYMS:
                continue
            hits = [v for v in values if v in spellings]
            if hits:
                problems.append(f"{rel}: {hits}")
    assert not problems, "stage names spelled outside their declaration:\n" + "\n".join(problems)


def test_every_task_stage_is_routed_to_its_declared_queue():
    from engram.celery_app import _routes
    from engram.settings import get_settings

    settings = get_settings()
    routes = _routes(settings)
    queues = {"ingest": settings.queue_ingest, "llm": settings.queue_llm, "embed": settings.queue_embed,
              "maintenance": settings.queue_maintenance}
    for flow in FLOWS:
        for stage in flow.tasks():
            assert routes[stage.task] == {"queue": queues[stage.queue]}, stage.task


def test_every_task_stage_is_a_registered_task():
    from engram.celery_app import app
    from engram.tasks import engine  # noqa: F401 - registers the stage tasks

    for flow in FLOWS:
        for stage in flow.tasks():
            assert stage.task in app.tasks, stage.task
