"""The UI's ASGI app: search playground, a call form for every registered tool, runs table, episode pages
and tool-use charts.

Server-rendered Jinja2 with autoescaping on every template and no JavaScript at all; assets are inside the
package. A Content-Security-Policy allowing no scripts is sent as a second line of defence, but nothing relies
on it: every string from Wikipedia, a dataset or a model reaches the page only through autoescaped template
variables, and links are only ever built here (paths of this app, never a URL taken from content). Error pages
(404 and 500 alike) carry the same security headers as every other response.

``create_app`` returns a FastAPI app that can run alone (``sws ui``) or be mounted under a prefix (links use
the ASGI ``root_path``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from sws.env import WikiTools
from sws.host_guard import HostPolicy
from sws.ui.pages import Pages, root_path
from sws.ui.playground_routes import playground_router
from sws.ui.runs import RunStore
from sws.ui.runs_routes import runs_router

logger = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "SAMEORIGIN",
}


def create_app(
    index_dir: str | Path | None = None,
    run_dirs: list[str | Path] | tuple[str | Path, ...] = (),
    *,
    tools: WikiTools | None = None,
    hosts: HostPolicy | None = None,
) -> FastAPI:
    """The UI app over an index (optional) and results directories (each one, or a folder of many).

    Args:
        index_dir: index directory for the playground (opened with ``SearchEngine.open``).
        run_dirs: results directories, or folders searched for them (any directory holding ``run.json``).
        tools: the model-facing tools to use as they are, instead of opening ``index_dir`` (tests).
        hosts: the ``Host`` / ``Origin`` a request must have (else 403 JSON); None: any (mounted in an app
            that checks them, tests).
    """
    if tools is None and index_dir is not None:
        from sws.search import SearchEngine

        tools = WikiTools(SearchEngine.open(Path(index_dir)))
    pages = Pages(tools, RunStore(tuple(run_dirs)), _index_info(tools, index_dir))

    app = FastAPI(title="sws ui", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.tools = tools
    app.state.runs = pages.store
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _add_middleware(app, pages, hosts)

    @app.get("/", include_in_schema=False)
    def home(request: Request) -> Response:
        landing = "search" if tools is not None or not pages.store.runs else "runs"
        return RedirectResponse(f"{root_path(request)}/{landing}", 302)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    app.include_router(playground_router(pages))
    app.include_router(runs_router(pages))
    return app


def _add_middleware(app: FastAPI, pages: Pages, hosts: HostPolicy | None) -> None:
    """The host check (403 JSON), inside the security headers that every response gets, error pages too."""

    @app.middleware("http")
    async def host_check(request: Request, call_next):
        refused = hosts.refusal(request.headers.get("host"), request.headers.get("origin")) if hosts else None
        if refused is None:
            return await call_next(request)
        code, message = refused
        return JSONResponse({"error": {"status": 403, "code": code, "message": message}}, 403)

    @app.middleware("http")
    async def security_headers(request: Request, call_next):
        try:
            response = await call_next(request)
        except Exception:  # the error page is made here, not by Starlette, so it gets the headers below
            logger.exception("%s %s failed", request.method, request.url.path)
            response = pages.server_error(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response


def _index_info(tools: WikiTools | None, index_dir: str | Path | None) -> dict[str, Any]:
    if tools is None:
        return {}
    backend = tools.backend
    info: dict[str, Any] = {"path": str(index_dir) if index_dir else ""}
    index = getattr(backend, "index", None)
    manifest = getattr(index, "manifest", None) or {}
    try:
        info["fingerprint"] = str(manifest.get("fingerprint") or "")[:16]
        info["chunks"] = (manifest.get("corpus") or {}).get("chunks")
        info["pages"] = (manifest.get("keyword") or {}).get("pages")
    except AttributeError:  # informational only
        pass
    return info
