"""`engram skills ...`: define skills and tools, list runs and proposals, score, improve, apply."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from engram.tasks.client import EngramClient, EngramError

skills_app = typer.Typer(help="Skills and tools of agentic recall (AGENTIC_COMPLETION).", no_args_is_help=True)
console = Console()


def _call(task: str, /, **kwargs) -> dict:
    """The public task `task` with the payload `kwargs` (which may hold a `name` of its own)."""
    from engram.cli.app import prepare_services, task_failed

    prepare_services()

    try:
        return EngramClient().call(task, **kwargs)
    except EngramError as exc:
        task_failed(exc)
        raise  # unreachable: task_failed exits


@skills_app.command("define")
def define(
    name: str = typer.Argument(...),
    dataset: str = typer.Option(..., "--dataset", "-d"),
    description: str = typer.Option(..., "--description"),
    procedure: Path = typer.Option(..., "--procedure", exists=True, dir_okay=False, help="a text file"),
    tool: list[str] = typer.Option([], "--tool", help="repeatable: tools the skill uses"),
    user: str = typer.Option("default"),
) -> None:
    """Store (or replace) a skill; a replaced procedure is kept in its history."""
    result = _call("engram.skills.define", dataset=dataset, user=user, name=name, description=description,
                   procedure=procedure.read_text(encoding="utf-8"), tools=tool)
    console.print(f"skill [bold]{name}[/bold] stored ({result['earlier_procedures']} earlier procedure(s) kept)")


@skills_app.command("tool")
def define_tool(
    name: str = typer.Argument(...),
    dataset: str = typer.Option(..., "--dataset", "-d"),
    description: str = typer.Option(..., "--description"),
    handler: str = typer.Option(..., "--handler", help="an allow-listed handler key (ENGRAM_AGENT_TOOLS)"),
    arguments: str = typer.Option("{}", "--arguments", help='JSON: {"name": "description"}'),
    required: list[str] = typer.Option([], "--required"),
    permission: str = typer.Option(None, "--permission", help="read, write, delete or share; default: what the "
                                                            "handler needs (never weaker)"),
    user: str = typer.Option("default"),
) -> None:
    """Store a tool spec for the dataset's agent."""
    from engram.cli.app import fail

    try:
        args = json.loads(arguments)
    except json.JSONDecodeError as exc:
        fail(f"--arguments is not JSON: {exc}", '--arguments \'{"query": "what to search for"}\'')
    result = _call("engram.skills.define_tool", dataset=dataset, user=user, name=name, description=description,
                   handler=handler, arguments=args, required=required,
                   **({"permission": permission} if permission else {}))
    console.print(f"tool [bold]{name}[/bold] stored" + (f" — [yellow]{result['warning']}[/yellow]" if result["warning"] else ""))


@skills_app.command("list")
def list_(
    dataset: str = typer.Option(..., "--dataset", "-d"),
    skill: str = typer.Option(None, "--skill"),
    user: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Skills, tools, recent runs and proposals of a dataset."""
    view = _call("engram.skills.list", dataset=dataset, user=user, skill=skill)
    if as_json:
        console.print_json(json.dumps(view))
        return
    table = Table("skill", "description", "tools", "earlier procedures")
    for s in view["skills"]:
        table.add_row(s["name"], s["description"], ", ".join(s["tools"]), str(len(s["earlier_procedures"])))
    console.print(table)
    runs = Table("run", "skill", "score", "error", "task")
    for r in view["runs"]:
        runs.add_row(r["id"], r["skill"], "unscored" if r["score"] is None else f"{r['score']:.2f}",
                     (r["error"] or "")[:40], r["task"][:60])
    console.print(runs)
    proposals = Table("proposal", "skill", "status", "confidence", "rationale")
    for p in view["proposals"]:
        proposals.add_row(p["id"], p["skill"], p["status"], f"{p['confidence']:.2f}", p["rationale"][:60])
    console.print(proposals)


@skills_app.command("score")
def score(run_id: str = typer.Argument(...), value: float = typer.Argument(..., help="0..1"),
          dataset: str = typer.Option(..., "--dataset", "-d"), user: str = typer.Option("default")) -> None:
    """Score a skill run (feedback)."""
    _call("engram.skills.feedback", dataset=dataset, user=user, run_id=run_id, score=value)
    console.print(f"run {run_id} scored {value:.2f}")


@skills_app.command("improve")
def improve(skill: str = typer.Argument(...), dataset: str = typer.Option(..., "--dataset", "-d"),
            user: str = typer.Option("default")) -> None:
    """Draft a better procedure from the skill's failed or low-scoring runs (opt-in)."""
    result = _call("engram.skills.improve", dataset=dataset, user=user, skill=skill)
    console.print(f"{result['status']}: " + (result.get("proposal_id") or result.get("reason", "")))


@skills_app.command("apply")
def apply(skill: str = typer.Argument(...), proposal_id: str = typer.Argument(...),
          dataset: str = typer.Option(..., "--dataset", "-d"), user: str = typer.Option("default")) -> None:
    """Apply a proposal to its skill; the old procedure stays in the skill's history."""
    result = _call("engram.skills.apply", dataset=dataset, user=user, skill=skill, proposal_id=proposal_id)
    console.print(f"applied: skill {result['skill']} now has {result['earlier_procedures']} earlier procedure(s)")
