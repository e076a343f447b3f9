"""The reference server's answers, endpoint x outcome: the table that keeps ``/search``, ``/open_url`` and
``/random`` a drop-in for the reference's clients (CONTRACT §1.3, §2.2-§2.6, §9.3; its server declares
pydantic request models, so FastAPI answers 422 for a body they reject, 400 for a ``ValueError``, and 200
with the observation for every tool outcome). Rows marked ``deviation`` are where sws answers differently
on purpose (listed in ``sws/env/__init__.py`` and serve/README.md); every other row is the reference's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sws.env import INVALID_URL_MESSAGE, NO_RESULTS, WikiTools
from tests.serve.cases import opened

Tools = Callable[..., WikiTools]  # WikiTools over the served index with the given options
Expected = Callable[[Tools, dict[str, Any], dict[str, Any]], str]  # (tools, request, response) -> content


@dataclass(frozen=True)
class Row:
    path: str
    outcome: str
    body: Any  # a JSON value, or bytes sent as they are
    status: int
    content: str | Expected | None = None  # None: an error body (no content to compare)
    deviation: str = ""  # what the reference answers instead, where sws differs on purpose


def _search(**options: Any) -> Expected:
    """The ``search`` observation of the request, by ``WikiTools(**options)`` (what ``/call`` answers)."""

    def expected(tools: Tools, request: dict[str, Any], response: dict[str, Any]) -> str:
        arguments = {k: v for k, v in request.items() if k not in ("max_chars_per_result", "link_mode")}
        return tools(**options).call_tool("search", json.dumps(arguments))

    return expected


def _opened(tools: Tools, request: dict[str, Any], response: dict[str, Any]) -> str:
    """The ``open_url`` observation of the URL the response names (for ``/random``: the one it drew)."""
    return opened(tools(), response["url"])


def conformance_rows(page: int) -> list[Row]:
    """The table over the served sample; ``page`` is the id of a 3-chunk page (Emmanuel Olisadebe)."""
    wiki = f"https://en.wikipedia.org/wiki/{page}"
    client_body = {"top_k": 5, "only_title": False, "method": "rrf", "max_chars_per_result": 1024}
    rows = [
        # /search: the reference client's own body, each method, then the options and every rejection
        Row("/search", "found", {"query": "Olisadebe Polish footballer", **client_body}, 200, _search()),
        Row("/search", "found keywords", {"query": "hotel in Canada", "method": "keywords"}, 200, _search()),
        Row("/search", "found vector", {"query": "bridge in Pasadena", "method": "vector"}, 200, _search()),
        Row("/search", "found titles", {"query": "Olisadebe", "only_title": True}, 200, _search()),
        Row("/search", "no results", {"query": "zzqxj unfindable", "method": "keywords"}, 200, NO_RESULTS),
        Row("/search", "lax types", {"query": "Sudan", "top_k": "3", "only_title": "no"}, 200, _search()),
        Row("/search", "lone surrogate", {"query": "\ud800 Sudan", "method": "keywords"}, 200, _search()),
        Row(
            "/search",
            "max_chars_per_result 32",
            {"query": "Sudan", "method": "keywords", "max_chars_per_result": 32},
            200,
            _search(snippet_chars=32),
        ),
        Row(
            "/search",
            "max_chars_per_result 100000",
            {"query": "Sudan", "max_chars_per_result": 100_000},
            200,
            _search(snippet_chars=100_000),
        ),
        Row(
            "/search",
            "link_mode title",
            {"query": "Sudan", "link_mode": "title"},
            200,
            _search(link_mode="title"),
        ),
        Row("/search", "link_mode wikiid", {"query": "Sudan", "link_mode": "wikiid"}, 200, _search()),
        Row("/search", "link_mode null", {"query": "Sudan", "link_mode": None}, 200, _search()),
        Row(
            "/search",
            "top_k above the bound",
            {"query": "the", "top_k": 10_000, "method": "keywords"},
            200,
            _search(),
            deviation="the reference searches for 10000 hits; sws clamps to max_top_k (50)",
        ),
        Row("/search", "empty query", {"query": ""}, 400),
        Row("/search", "blank query", {"query": "  \n "}, 400),
        Row(
            "/search",
            "over-long query",
            {"query": "x" * 5000},
            400,
            deviation="the reference searches any length; sws: 400 beyond max_query_chars (4096)",
        ),
        Row("/search", "missing query", {"top_k": 3}, 422),
        Row("/search", "query not a string", {"query": 5}, 422),
        Row("/search", "query a list", {"query": ["x"]}, 422),
        Row("/search", "top_k 0", {"query": "x", "top_k": 0}, 422),
        Row("/search", "top_k fractional", {"query": "x", "top_k": 5.5}, 422),
        Row("/search", "top_k a word", {"query": "x", "top_k": "ten"}, 422),
        Row("/search", "only_title not a boolean", {"query": "x", "only_title": "maybe"}, 422),
        Row("/search", "max_chars_per_result 31", {"query": "x", "max_chars_per_result": 31}, 422),
        Row("/search", "max_chars_per_result 100001", {"query": "x", "max_chars_per_result": 100_001}, 422),
        Row("/search", "unknown link_mode", {"query": "x", "link_mode": "slug"}, 422),
        Row("/search", "unknown method", {"query": "x", "method": "semantic"}, 422),
        Row("/search", "method alias", {"query": "x", "method": "kw"}, 422),  # the client normalises first
        Row("/search", "malformed JSON", b"{oops", 422),
        Row("/search", "body not an object", [1, 2], 422),
        Row(
            "/search",
            "body over the bound",
            {"query": "x " * 40_000},
            413,
            deviation="the reference reads any body; sws refuses one over max_body_bytes (64 KiB)",
        ),
        # /open_url: every tool outcome is 200 with the contract's string
        Row("/open_url", "found chunk", {"url": f"{wiki}#chunk-2"}, 200, _opened),
        Row("/open_url", "found article", {"url": wiki}, 200, _opened),
        Row("/open_url", "found by title", {"url": "/wiki/Emmanuel_Olisadebe#History"}, 200, _opened),
        Row(
            "/open_url",
            "chunk out of range",
            {"url": f"{wiki}#chunk-99"},
            200,
            f"Chunk not found: {page}#chunk-99",
        ),
        Row(
            "/open_url",
            "not found",
            {"url": "https://en.wikipedia.org/wiki/999999999999"},
            200,
            "No document found for identifier: 999999999999",
        ),
        Row(
            "/open_url",
            "invalid URL",
            {"url": "https://en.wikipedia.org/w/index.php?title=X"},
            200,
            INVALID_URL_MESSAGE,
        ),
        Row("/open_url", "non-Wikipedia URL", {"url": "https://example.com/x"}, 200, INVALID_URL_MESSAGE),
        Row("/open_url", "empty url", {"url": ""}, 200, INVALID_URL_MESSAGE),
        Row("/open_url", "blank url", {"url": "   "}, 200, INVALID_URL_MESSAGE),
        Row("/open_url", "numeric url (as the client sends it)", {"url": "5"}, 200, INVALID_URL_MESSAGE),
        Row("/open_url", "lone surrogate", {"url": "/wiki/\ud800Olisadebe"}, 200, _opened),
        Row("/open_url", "url a number", {"url": 5}, 422),
        Row("/open_url", "url null", {"url": None}, 422),
        Row("/open_url", "missing url", {}, 422),
        Row("/open_url", "malformed JSON", b'{"url": ', 422),
        # /random (not a tool: POST as the reference, GET too)
        Row("/random", "chunk (default)", {}, 200, _opened),
        Row("/random", "page with seed", {"mode": "page", "seed": 3}, 200, _opened),
        Row("/random", "lax seed", {"seed": "11"}, 200, _opened),
        Row("/random", "unknown mode", {"mode": "article"}, 422),
        Row("/random", "seed a word", {"seed": "abc"}, 422),
        Row("/random", "seed fractional", {"seed": 1.5}, 422),
    ]
    return rows


def send(client: Any, row: Row, headers: dict[str, str] | None = None) -> Any:
    """POST the row's body (JSON, or bytes as they are) with ``client`` (an httpx-style client)."""
    content = (
        row.body if isinstance(row.body, bytes) else json.dumps(row.body).encode()
    )  # surrogates as \u escapes
    return client.post(
        row.path, content=content, headers={"content-type": "application/json", **(headers or {})}
    )


def check(row: Row, response: Any, tools: Tools) -> None:
    """The response is the row's status and content (or a JSON error body naming the status)."""
    label = f"{row.path} {row.outcome}"
    assert response.status_code == row.status, (label, response.text[:500])
    data = response.json()
    if row.status != 200:
        assert data["error"]["status"] == row.status, (label, data)
        return
    expected = row.content(tools, row.body, data) if callable(row.content) else row.content
    assert data["content"] == expected, (label, data["content"][:300], expected[:300])
