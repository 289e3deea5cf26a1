"""The runnable snippets of README.md and docs/*.md.

A fenced ```bash or ```python block is runnable when the line right before its fence is
`<!-- runnable -->` (invisible when rendered). tests/integration/test_doc_snippets.py runs every
runnable block verbatim against a real worker; tests/unit/test_docs.py checks the markers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^```(\w*)[ \t]*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    runnable: bool
    section: str  # the nearest `## ` heading above the block

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of one Markdown file, in order."""
    lines = path.read_text().splitlines()
    found, section, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        opening = FENCE.match(line)
        if opening is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        if end is None:
            raise ValueError(f"{path.name}:{i + 1}: a fence that never closes")
        runnable = i > 0 and lines[i - 1].strip() == MARKER
        found.append(Block(path, i + 1, opening.group(1), "\n".join(lines[i + 1:end]) + "\n", runnable, section))
        i = end + 1
    return found


def dangling_markers(path: Path) -> list[int]:
    """Lines of markers not right above a ```bash / ```python fence (a marker that marks nothing)."""
    lines = path.read_text().splitlines()
    bad = []
    for n, line in enumerate(lines):
        if line.strip() == MARKER:
            nxt = FENCE.match(lines[n + 1]) if n + 1 < len(lines) else None
            if nxt is None or nxt.group(1) not in ("bash", "python"):
                bad.append(n + 1)
    return bad


def runnable_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path) if b.runnable]
