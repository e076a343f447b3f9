"""The playground's pages: search, open a URL, and the call form of every registered tool."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from sws.env import DEFAULT_TOP_K, SEARCH_METHODS
from sws.ui.pages import Pages, root_path
from sws.ui.playground import open_page, run_search


def playground_router(pages: Pages) -> APIRouter:
    """``/search``, ``/open`` and ``/call`` over ``pages.tools`` (each page says so when there is no index)."""
    router = APIRouter()
    tools = pages.tools

    @router.get("/search", response_class=HTMLResponse)
    def search(
        request: Request,
        q: str = "",
        method: str = "rrf",
        top_k: str = str(DEFAULT_TOP_K),
        only_title: str = "",
    ) -> HTMLResponse:
        flag = only_title.strip().lower() in ("1", "true", "on", "yes")
        result = None
        if q and tools is not None:
            result = run_search(tools, root_path(request), q, method, top_k, flag)
        return pages.render(
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

    @router.get("/open", response_class=HTMLResponse)
    def open_view(request: Request, url: str = "") -> HTMLResponse:
        result = open_page(tools, root_path(request), url) if url and tools is not None else None
        title = result.title if result and result.title else "Open a page"
        return pages.render(request, "open.html", nav="search", title=title, url=url, result=result)

    @router.get("/call", response_class=HTMLResponse)
    def call(request: Request, name: str = "", arguments: str = "{}") -> HTMLResponse:
        listed = [schema["function"] for schema in tools.registered_schemas] if tools is not None else []
        result = tools.call_tool(name, arguments) if name and tools is not None else None
        title = f"Call: {name}" if name else "Call a tool"
        context = {"tool": name, "arguments": arguments, "tools": listed, "result": result}
        return pages.render(request, "call.html", nav="call", title=title, **context)

    return router
