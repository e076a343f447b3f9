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
import math
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from sws.env import DEFAULT_TOP_K, SEARCH_METHODS, WikiTools
from sws.eval.report import report_tables
from sws.host_guard import HostPolicy
from sws.ui import charts as chart_lib
from sws.ui.episode import answer_checks, episode_steps
from sws.ui.playground import open_page, run_search
from sws.ui.runs import ALL_RUNS, TABLE_COLUMNS, RunStore, TableQuery

logger = logging.getLogger(__name__)
HERE = Path(__file__).parent
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
NUMERIC_COLUMNS = frozenset(
    {"f1", "gpt_judge", "rounds", "search_calls", "open_calls", "total_tokens", "time_cost", "index"}
)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
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


def create_app(
    index_dir: str | Path | None = None,
    run_dirs: list[str | Path] | tuple[str | Path, ...] = (),
    *,
    engine: Any = None,
    tools: WikiTools | None = None,
    hosts: HostPolicy | None = None,
) -> FastAPI:
    """The UI app over an index (optional) and results directories (each one, or a folder of many).

    Args:
        index_dir: index directory for the playground (opened with ``SearchEngine.open``).
        run_dirs: results directories, or folders searched for them (any directory holding ``run.json``).
        engine: an already opened search backend instead of ``index_dir`` (tests, the Serve ingress).
        tools: the model-facing tools to use as they are (overrides ``index_dir`` and ``engine``).
        hosts: the ``Host`` / ``Origin`` a request must have (else 403 JSON); None: any (mounted in an app
            that checks them, tests).
    """
    if tools is None and engine is None and index_dir is not None:
        from sws.search import SearchEngine

        engine = SearchEngine.open(Path(index_dir))
    if tools is None and engine is not None:
        tools = WikiTools(engine)
    index_info = _index_info(tools, index_dir)
    store = RunStore(tuple(run_dirs))
    env = _environment()

    app = FastAPI(title="sws ui", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.tools = tools
    app.state.runs = store
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.middleware("http")
    async def host_check(request: Request, call_next):  # inside security_headers: a 403 gets them too
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
            message = "The server failed on this page; the details are in its log."
            response = render(request, "error.html", 500, title="Server error", message=message, nav="")
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    def render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        html = env.get_template(name).render(
            root=root, index=index_info, has_index=tools is not None, runs=store.runs, **context
        )
        return HTMLResponse(html, status_code=status_code)

    def not_found(request: Request, message: str) -> HTMLResponse:
        return render(request, "error.html", 404, title="Not found", message=message, nav="")

    @app.get("/", include_in_schema=False)
    def home(request: Request) -> Response:
        root = request.scope.get("root_path", "").rstrip("/")
        return RedirectResponse(
            f"{root}/search" if tools is not None or not store.runs else f"{root}/runs", 302
        )

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/search", response_class=HTMLResponse)
    def search(
        request: Request,
        q: str = "",
        method: str = "rrf",
        top_k: str = str(DEFAULT_TOP_K),
        only_title: str = "",
    ) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        flag = only_title.strip().lower() in ("1", "true", "on", "yes")
        result = None
        if q and tools is not None:
            result = run_search(tools, root, q, method, top_k, flag)
        return render(
            request,
            "search.html",
            nav="search",
            title=f"Search: {q}" if q else "Search playground",
            q=q,
            method=method,
            top_k=top_k,
            only_title=flag,
            methods=SEARCH_METHODS,
            result=result,
        )

    @app.get("/open", response_class=HTMLResponse)
    def open_view(request: Request, url: str = "") -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        result = open_page(tools, root, url) if url and tools is not None else None
        title = result.title if result and result.title else "Open a page"
        return render(request, "open.html", nav="search", title=title, url=url, result=result)

    @app.get("/call", response_class=HTMLResponse)
    def call(request: Request, name: str = "", arguments: str = "{}") -> HTMLResponse:
        listed = [schema["function"] for schema in tools.registered_schemas] if tools is not None else []
        result = tools.call_tool(name, arguments) if name and tools is not None else None
        title = f"Call: {name}" if name else "Call a tool"
        context = {"tool": name, "arguments": arguments, "tools": listed, "result": result}
        return render(request, "call.html", nav="call", title=title, **context)

    @app.get("/runs", response_class=HTMLResponse)
    def runs(request: Request) -> HTMLResponse:
        store.refresh()
        summaries = [(run, store.summary(run)) for run in store.runs]
        stats = [s.stats for _, s in summaries if s.stats is not None]
        tables = report_tables(stats) if stats else []
        return render(request, "runs.html", nav="runs", title="Runs", summaries=summaries, tables=tables)

    @app.get("/runs/{key}", response_class=HTMLResponse)
    def run_table(request: Request, key: str) -> HTMLResponse:
        if store.get(key) is None and key != ALL_RUNS:
            store.refresh()
        run = store.get(key)
        if run is None and key != ALL_RUNS:
            return not_found(request, f"No run {key!r}.")
        started = time.perf_counter()
        query = TableQuery.parse(dict(request.query_params))
        page = store.table(key, query)
        chosen = store.runs if key == ALL_RUNS else [run]
        summaries = [(r, store.summary(r)) for r in chosen]
        return render(
            request,
            "table.html",
            nav="runs",
            title=run.label if run else "All runs",
            key=key,
            run=run,
            summaries=summaries,
            query=query,
            page=page,
            columns=TABLE_COLUMNS,
            numeric=NUMERIC_COLUMNS,
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )

    @app.get("/runs/{key}/episode", response_class=HTMLResponse)
    def episode(request: Request, key: str, id: str = "") -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        run = store.get(key)
        if run is None:
            store.refresh()
            run = store.get(key)
        record = store.episode(run, id) if run is not None and id else None
        if record is None:
            return not_found(request, f"No episode {id!r} in run {key!r}.")
        return render(
            request,
            "episode.html",
            nav="runs",
            title=f"Episode {record.id}",
            run=run,
            record=record,
            steps=episode_steps(record, root),
            checks=answer_checks(record),
        )

    @app.get("/charts", response_class=HTMLResponse)
    def charts(request: Request, run: str = ALL_RUNS) -> HTMLResponse:
        store.refresh()
        chosen = store.runs if run == ALL_RUNS else [r for r in store.runs if r.key == run]
        if not chosen and run != ALL_RUNS:
            return not_found(request, f"No run {run!r}.")
        rows = [row for r in chosen for row in store.summary(r).rows]
        overview, per_dataset = chart_lib.tool_use_charts(rows)
        return render(
            request,
            "charts.html",
            nav="charts",
            title="Tool use",
            selected=run,
            n_rows=len(rows),
            overview=overview,
            per_dataset=per_dataset,
        )

    return app


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
