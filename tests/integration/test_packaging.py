"""A built (non-editable) install, as in the Docker image, carries what demo and eval need."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_ships_the_demo_corpus_its_qa_set_and_the_explorers_templates(tmp_path):
    # Built from a copy: a build writes build/ into its source tree, which the checkout must not get.
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", ".hypothesis", "results", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(source)], check=True, capture_output=True)
    [wheel] = tmp_path.glob("engram-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    demo = {p.name for p in (ROOT / "cli" / "data" / "demo").iterdir()}
    assert {f"engram/cli/data/demo/{n}" for n in demo} <= names
    assert "engram/cli/data/demo_qa.jsonl" in names
    assert not any(n.startswith("engram/bench/") for n in names)  # the lab stays out of the product
    explorer = ROOT / "cli" / "explorer"
    assert {f"engram/cli/explorer/{p.relative_to(explorer).as_posix()}"
            for p in [*explorer.glob("templates/*.html"), *explorer.glob("static/*.css")]} <= names
