"""Every `engram` command has a test that runs it, and a command's refusal is one line with its fix."""

from __future__ import annotations

import ast
from pathlib import Path

import click
import typer
from typer.testing import CliRunner

from engram.cli import app

ROOT = Path(__file__).resolve().parents[2]
RUNNERS = {"engram", "_engram", "cli", "engram_cli", "_cli"}  # the tests' helpers that run the CLI with their arguments


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    out = set()
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out |= _commands(command, prefix + (name,))
        else:
            out.add(prefix + (name,))
    return out


def _strings(nodes, names: dict[str, list[str]]) -> list[str]:
    """The leading string constants; `*name` of a tuple of strings assigned in the file counts too."""
    out = []
    for node in nodes:
        if isinstance(node, ast.Starred) and getattr(node.value, "id", None) in names:
            out += names[node.value.id]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        else:
            break
    return out


def _invocations(path: Path) -> set[tuple[str, ...]]:
    """The leading string arguments of every CLI run in a test file: `[..., "engram.cli", "db",
    "upgrade"]`, or a runner helper's call `engram(url, "skills", "list", ...)` / `cli(worker, "forget")`."""
    tree = ast.parse(path.read_text(), str(path))
    names = {}
    for node in ast.walk(tree):  # forget = ("forget", "-d", name): a command's words kept in a tuple
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Tuple | ast.List):
            names[node.targets[0].id] = _strings(node.value.elts, {})
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple):
            values = [getattr(e, "value", None) for e in node.elts]
            if "engram.cli" in values:
                found.add(tuple(_strings(node.elts[values.index("engram.cli") + 1:], names)))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in RUNNERS:
            first = node.args[0] if node.args else None
            skip = first is not None and not (isinstance(first, ast.Constant) and isinstance(first.value, str)) \
                and not isinstance(first, ast.Starred)
            found.add(tuple(_strings(node.args[1:] if skip else node.args, names)))
    return found


def test_every_command_has_a_test_that_runs_it():
    invoked: set[tuple[str, ...]] = set()
    for path in sorted((ROOT / "tests" / "integration").glob("*.py")):
        invoked |= _invocations(path)
    untested = sorted(" ".join(c) for c in _commands(typer.main.get_command(app))
                      if not any(run[:len(c)] == c for run in invoked))
    assert untested == [], f"commands no integration test runs: {untested}"


def test_the_scan_sees_each_way_a_test_runs_the_cli(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('run([sys.executable, "-m", "engram.cli", "db", "upgrade"])\n'
                     'engram(None, "services", "stop", env=env)\n'
                     'forget = ("forget", "-d", ds)\ncli(worker, *forget, "--all")\n'
                     'engram(url, f"{x}")\n')
    assert _invocations(probe) == {("db", "upgrade"), ("services", "stop"), ("forget", "-d", "--all"), ()}


runner = CliRunner()


def test_the_remember_refusals_write_nothing_and_need_no_service(monkeypatch):
    def no_services(*a, **k):
        raise AssertionError("remember refused nothing: it reached for the services")

    monkeypatch.setattr("engram.cli.memory.prepare_services", no_services)
    for args in (["remember", "nosuch.md", "-d", "x"], ["remember", "", "-d", "x"], ["remember", "-d", "x"],
                 ["remember", "--text", "  ", "-d", "x"]):
        result = runner.invoke(app, args, input="")
        assert result.exit_code == 1, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and " — fix: " in lines[0], (args, result.output)


def test_db_upgrade_on_a_server_without_pgvector_prints_doctors_fix_not_a_traceback(monkeypatch):
    from engram.cli import doctor, operations

    monkeypatch.setattr(operations, "prepare_services", lambda migrate=True: None)
    monkeypatch.setattr(doctor, "run_checks", lambda **kw: [
        doctor.Check("postgres", True, "external PostgreSQL 16"),
        doctor.Check("pgvector", False, "the pgvector extension is not installed in this PostgreSQL server",
                     "install it (apt install postgresql-16-pgvector)")])
    for args in (["db", "upgrade"], ["worker"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 1, result.output
        assert result.output.strip() == ("error: pgvector: the pgvector extension is not installed in this "
                                          "PostgreSQL server — fix: install it (apt install postgresql-16-pgvector)")
