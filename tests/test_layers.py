"""Import arrows point down the layers of README "Layout", and no package edits ``sys.path`` to find another."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Lowest first. A unit imports its own modules and units of lower layers only: units that share a layer are
# independent of each other. A unit is a package of sws (``sws.index``), a module at its top (``sws.io``), or
# ``serve`` whole.
LAYERS = (
    (
        "sws",
        "sws.types",
        "sws.io",
        "sws.manifest",
        "sws.cache",
        "sws.raykit",
        "sws.retry",
        "sws.host_guard",
        "sws.torch_companions",
        "sws.stopping",
    ),
    ("sws.config",),
    ("sws.fetch", "sws.corpus"),
    ("sws.index",),
    ("sws.search",),
    ("sws.env",),
    ("sws.transport", "sws.agent"),
    ("sws.eval",),
    ("serve", "sws.ui", "sws.stages"),
    ("sws.cli",),
    ("sws.__main__", "ray_jobs"),
)
LAYER = {unit: level for level, units in enumerate(LAYERS) for unit in units}
NEVER = {  # beyond the layers: the service never calls its own clients
    "serve": ("sws.transport", "sws.agent.tools"),
}


def unit_of(module: str) -> str | None:
    """The unit a dotted module name belongs to; None outside sws, serve and ray_jobs."""
    parts = module.split(".")
    if parts[0] in ("serve", "ray_jobs"):
        return parts[0]
    if parts[0] != "sws":
        return None
    return "sws" if len(parts) == 1 else f"sws.{parts[1]}"


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of sws, serve and ray_jobs."""
    found = {}
    for package in ("sws", "serve", "ray_jobs"):
        for file in sorted((REPO / package).rglob("*.py")):
            parts = file.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return found


def _imports(file: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(file.read_text())):  # every import, the ones inside functions included
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


MODULES = _modules()


def test_every_unit_has_a_layer():
    assert sorted({unit_of(name) for name in MODULES} - set(LAYER)) == []


@pytest.mark.parametrize("unit", sorted(LAYER))
def test_no_arrow_points_up_or_sideways(unit):
    wrong = []
    for name, file in MODULES.items():
        if unit_of(name) != unit:
            continue
        for imported in sorted(_imports(file)):
            target = unit_of(imported)
            if target in (None, unit):
                continue
            never = any(imported == bad or imported.startswith(f"{bad}.") for bad in NEVER.get(unit, ()))
            if never or LAYER[target] >= LAYER[unit]:
                wrong.append(f"{file.relative_to(REPO)}: {imported}")
    assert wrong == []


def test_no_sys_path_edits():
    edits = [
        str(file.relative_to(REPO))
        for package in ("sws", "serve", "ray_jobs", "tests")
        for file in sorted((REPO / package).rglob("*.py"))
        if file != Path(__file__).resolve() and "sys.path" in file.read_text()
    ]
    assert edits == []
