"""Tool calls covering the contract's paths (good, odd and wrong arguments) over the real-sample index."""

from __future__ import annotations

import json

QUERIES = [
    "Olisadebe Polish footballer",
    "history of Sudan under Anglo-Egyptian rule",
    "pneumonia in intensive care",
    "hotel in Canada",
    "bridge in Pasadena",
]


def tool_cases(engine) -> list[tuple[str, str | None]]:
    """``(tool name, arguments JSON)`` pairs; every one has an exact in-process observation."""
    page = engine.resolve_page("Emmanuel Olisadebe")
    cases: list[tuple[str, str | None]] = []
    for query in QUERIES:
        for method in ("rrf", "keywords", "vector"):
            cases.append(("search", json.dumps({"query": query, "top_k": 5, "method": method})))
    cases += [
        ("search", json.dumps({"query": "Sudan"})),  # defaults: rrf, top_k 10
        ("search", json.dumps({"query": "Olisadebe", "only_title": True, "top_k": 3})),
        ("search", json.dumps({"query": "footballer", "only_title": "false", "method": "KW"})),
        ("search", json.dumps({"query": "canal", "top_k": "7", "method": "vec"})),
        ("search", json.dumps({"query": "canal", "top_k": 10_000, "method": "keywords"})),  # clamped
        ("search", json.dumps({"query": "zzqxj unfindable wordzz", "method": "keywords"})),
        ("search", json.dumps({"query": 'C++ "quoted phrase" AND (x OR y) field:term -not +must'})),
        ("search", json.dumps({"query": "日本語 Ελληνικά émigré"})),
        ("search", json.dumps({"query": "\ud800 lone surrogate", "method": "keywords"})),
        ("search", json.dumps({"query": "   "})),
        ("search", json.dumps({"query": "x", "method": "semantic"})),
        ("search", json.dumps({"query": "x", "only_title": "maybe"})),
        ("search", "[1, 2]"),
        ("search", "{not json"),
        ("search", None),
        ("open_url", json.dumps({"url": f"https://en.wikipedia.org/wiki/{page}#chunk-2"})),
        ("open_url", json.dumps({"url": f"https://en.wikipedia.org/wiki/{page}"})),
        ("open_url", json.dumps({"url": f"https://en.wikipedia.org/wiki/{page}#chunk-99"})),
        ("open_url", json.dumps({"url": "https://en.wikipedia.org/wiki/Moishezon_space#chunk-1"})),
        ("open_url", json.dumps({"url": "/wiki/Emmanuel_Olisadebe#History"})),
        ("open_url", json.dumps({"url": "https://en.wikipedia.org/w/index.php?title=X"})),
        ("open_url", json.dumps({"url": "https://en.wikipedia.org/wiki/999999999999"})),
        ("open_url", json.dumps({})),
        ("submit_answer", json.dumps({"answer": "Warsaw"})),
        ("delete_everything", json.dumps({})),
        (" search ", json.dumps({"query": "Sudan", "top_k": 2, "method": "keywords"})),
    ]
    return cases


def opened(tools, url: str) -> str:
    """The ``open_url`` observation of ``url`` by ``tools`` (a ``WikiTools``)."""
    return tools.call_tool("open_url", json.dumps({"url": url}))


SEARCH = {"query": "Sudan history", "top_k": 2, "method": "keywords"}
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "search", "arguments": SEARCH},
}
MCP_ACCEPT = {"accept": "application/json, text/event-stream"}


def guarded_requests(auth: dict[str, str]) -> list[tuple[str, str, dict[str, str], dict | None]]:
    """``(method, path, headers, JSON body)`` of /info, /search and MCP tools/call: what a DNS-rebinding page
    would read (the Host/Origin guard's cases)."""
    return [
        ("GET", "/info", auth, None),
        ("POST", "/search", auth, SEARCH),
        ("POST", "/mcp", {**auth, **MCP_ACCEPT}, MCP_CALL),
    ]
