"""The tools by name: ``register_tool(Tool(...))`` makes a tool callable everywhere; the built-ins register the
same way.

Every ``WikiTools`` made afterwards answers it (in process, ``/call``, the handle API), ``/tools`` and MCP list
it, the agent answers it itself when it ends the episode and the record counters count it as known. What the
model is offered by default stays the contract's three (:data:`TOOL_NAMES`); a run offers more by passing
their schemas to the agent.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from sws.env.open_url_tool import OPEN_URL
from sws.env.search_tool import SEARCH
from sws.env.submit_tool import SUBMIT_ANSWER
from sws.env.tool import Tool, ToolOptions

BUILTIN_TOOLS = (SEARCH, OPEN_URL, SUBMIT_ANSWER)
TOOL_NAMES = tuple(tool.name for tool in BUILTIN_TOOLS)  # the contract's tools, in the order it lists them
_TOOLS: dict[str, Tool] = {}


def register_tool(tool: Tool) -> Tool:
    """Make ``tool`` callable (every ``WikiTools`` made afterwards); returns it.

    Raises:
        ValueError: the name is taken, or the schema names another tool.
    """
    if tool.name in _TOOLS:
        raise ValueError(f"a tool named {tool.name!r} is already registered")
    named = tool.schema(ToolOptions())["function"]["name"]
    if named != tool.name:
        raise ValueError(f"tool {tool.name!r}: its schema names {named!r}")
    _TOOLS[tool.name] = tool
    return tool


def unregister_tool(name: str) -> None:
    """Undo :func:`register_tool` (``WikiTools`` made before keep the tools they were made with)."""
    del _TOOLS[name]


def registered_tools() -> dict[str, Tool]:
    """A copy of the registry, name -> tool, in registration order."""
    return dict(_TOOLS)


def get_tool(name: str) -> Tool | None:
    return _TOOLS.get(name)


def import_tool_modules(modules: Iterable[str]) -> None:
    """Import ``modules`` (dotted names), whose tools register when imported; one already imported is left as
    it is.

    Raises:
        ValueError: a module that cannot be imported.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ValueError(f"cannot import tool module {module!r}: {exc}") from exc


def schemas_of(names: Iterable[str], options: ToolOptions) -> list[dict[str, Any]]:
    """Fresh schemas of the registered tools ``names``, in that order, under ``options``.

    Raises:
        ValueError: a name no tool is registered under.
    """
    names = list(names)
    unknown = [n for n in names if n not in _TOOLS]
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown} (registered: {', '.join(_TOOLS)})")
    return [_TOOLS[n].schema(options) for n in names]


def tool_schemas(search_description: str = "markdown") -> list[dict[str, Any]]:
    """A fresh ``[search, open_url, submit_answer]`` list; ``search_description`` keys SEARCH_DESCRIPTIONS."""
    options = ToolOptions(search_description=search_description)
    return [tool.schema(options) for tool in BUILTIN_TOOLS]


def _register_builtins() -> None:
    for tool in BUILTIN_TOOLS:
        register_tool(tool)


_register_builtins()
