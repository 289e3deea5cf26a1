"""The README is a front door: short, links that stay inside the repository, and its Quick start
runnable (tests/integration/test_doc_snippets.py runs every block marked runnable)."""

from __future__ import annotations

import re

from doc_snippets import ROOT, blocks, dangling_markers, doc_files, runnable_blocks

README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in path.read_text().splitlines() if re.match(r"#{1,6} ", line)}


def test_the_readme_is_at_most_250_lines():
    assert len(README.read_text().splitlines()) <= 250


def test_the_readme_has_no_parent_links():
    assert "](../" not in README.read_text()


def test_every_relative_link_stays_in_the_repository_and_resolves():
    broken = []
    for path in doc_files():
        for target in LINK.findall(path.read_text()):
            if re.match(r"[a-z]+:", target):  # http(s):, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            if ROOT not in resolved.parents and resolved != ROOT:
                broken.append(f"{path.name}: {target} leaves the repository")
            elif not resolved.exists():
                broken.append(f"{path.name}: {target} does not exist")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{path.name}: {target} names no heading of {resolved.name}")
    assert broken == []


def test_every_runnable_marker_marks_a_bash_or_python_block():
    assert {p.name: dangling_markers(p) for p in doc_files() if dangling_markers(p)} == {}


def test_the_readme_quick_start_blocks_are_all_runnable():
    quick = [b for b in blocks(README) if b.section == "Quick start"]
    assert quick, "the README has no Quick start blocks"
    assert [(b.id, b.runnable) for b in quick] == [(b.id, True) for b in quick]
    assert {b.lang for b in quick} >= {"python", "bash"}


def test_runnable_blocks_are_found_in_the_readme_and_the_docs():
    found = {b.path.name for b in runnable_blocks()}
    assert "README.md" in found and len(found) > 1, found
