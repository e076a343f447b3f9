"""The UI's page rendering: a Jinja2 environment that autoescapes every template, and the context every page
gets (the index, the runs, the app's ``root_path`` for links)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from sws.env import WikiTools
from sws.ui.runs import RunStore

TEMPLATES = Path(__file__).parent / "templates"


def root_path(request: Request) -> str:
    """The prefix the app is mounted under ("" alone): every link of a page starts with it."""
    return request.scope.get("root_path", "").rstrip("/")


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["pct"] = lambda v: "–" if v is None else f"{100 * v:.2f}"
    env.globals["qs"] = lambda params: urlencode(params)
    return env


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:,.{digits}f}"
    return str(value)


class Pages:
    """Renders the templates for one app.

    Args:
        tools: the playground's tools (None: the app has no index).
        store: the runs.
        index_info: what the pages show of the index (path, fingerprint, counts).
    """

    def __init__(self, tools: WikiTools | None, store: RunStore, index_info: dict[str, Any]):
        self.tools, self.store, self.index_info = tools, store, index_info
        self._env = _environment()

    def render(self, request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self._env.get_template(name).render(
            root=root_path(request),
            index=self.index_info,
            has_index=self.tools is not None,
            runs=self.store.runs,
            **context,
        )
        return HTMLResponse(html, status_code=status_code)

    def not_found(self, request: Request, message: str) -> HTMLResponse:
        return self.render(request, "error.html", 404, title="Not found", message=message, nav="")

    def server_error(self, request: Request) -> HTMLResponse:
        message = "The server failed on this page; the details are in its log."
        return self.render(request, "error.html", 500, title="Server error", message=message, nav="")
