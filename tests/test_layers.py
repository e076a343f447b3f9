"""Import arrows of the tool layers point down, and no package edits ``sys.path`` to find another."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {  # package or module -> what it must not import
    "sws/env": ("sws.agent", "sws.transport", "sws.eval", "serve"),
    "sws/retry.py": ("sws", "serve"),  # below every caller: the fetcher's, the tool clients', the LLM's
    "sws/transport": ("sws.agent", "sws.config", "sws.eval", "serve"),
    "serve": ("sws.transport", "sws.agent.tools"),
}


def _files(path: str) -> list[Path]:
    root = REPO / path
    return [root] if root.suffix == ".py" else sorted(root.rglob("*.py"))


def _imports(file: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(FORBIDDEN))
def test_no_arrow_points_up(path):
    wrong = [
        f"{file.relative_to(REPO)}: {name}"
        for file in _files(path)
        for name in sorted(_imports(file))
        if any(name == bad or name.startswith(f"{bad}.") for bad in FORBIDDEN[path])
    ]
    assert wrong == []


def test_no_sys_path_edits():
    edits = [
        str(file.relative_to(REPO))
        for package in ("sws", "serve", "ray_jobs", "tests")
        for file in _files(package)
        if file != Path(__file__).resolve() and "sys.path" in file.read_text()
    ]
    assert edits == []
