"""The search playground: the model's exact observations plus the structured hits and page navigation.

The observation text comes from the same calls the agent's tool dispatch makes (the search tool's
``search_hits`` + ``render_search`` for a valid search, ``call_tool`` otherwise), so what is shown is what the
model would see.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from sws.env import WikiTools, chunk_url, parse_wiki_url, render_search, search_hits
from sws.env.hits import make_snippet, make_title_snippet
from sws.env.urls import WIKI_BASE_URL


@dataclass(slots=True)
class HitView:
    rank: int
    title: str
    page_id: int
    chunk_number: int
    n_chunks: int
    url: str
    source: str
    score: float
    text_rank: int | None
    vector_rank: int | None
    snippet: str
    chunk_href: str
    article_href: str


@dataclass(slots=True)
class SearchResult:
    query: str
    method: str
    top_k: str
    only_title: bool
    arguments: str = ""  # the search call's arguments JSON, as a model would send it
    observation: str = ""
    hits: list[HitView] = field(default_factory=list)
    error: bool = False
    elapsed_ms: float = 0.0


@dataclass(slots=True)
class ChunkLink:
    number: int
    href: str
    current: bool


@dataclass(slots=True)
class OpenResult:
    url: str
    observation: str
    kind: str  # "chunk", "article" or "error"
    title: str = ""
    page_id: int | None = None
    chunk_number: int | None = None
    n_chunks: int = 0
    prev_href: str | None = None
    next_href: str | None = None
    article_href: str | None = None
    chunks: list[ChunkLink] = field(default_factory=list)
    elapsed_ms: float = 0.0


def open_link(root: str, url: str) -> str:
    return f"{root}/open?{urlencode({'url': url})}"


def run_search(
    tools: WikiTools, root: str, query: str, method: str, top_k: str, only_title: bool
) -> SearchResult:
    """The ``search`` observation and its hits for the playground form (never raises)."""
    result = SearchResult(query, method, top_k, only_title)
    k: int | str = int(top_k) if top_k.strip().isdigit() and len(top_k.strip()) < 10 else top_k
    raw: dict[str, Any] = {"query": query, "top_k": k, "only_title": only_title, "method": method}
    result.arguments = json.dumps(raw, ensure_ascii=False)
    start = time.perf_counter()
    call = tools.parse("search", result.arguments)
    if isinstance(call, str):  # shown as the model would see it
        result.observation, result.error = call, True
        return result
    args = call.args
    try:
        hits = search_hits(tools.backend, args)
        result.observation = render_search(args, hits)
    except Exception as exc:  # noqa: BLE001 - a backend failure is the model's error observation too
        result.observation, result.error = call.observe(exc), True
        return result
    result.elapsed_ms = (time.perf_counter() - start) * 1000
    for rank, hit in enumerate(hits, 1):
        chunk = hit.chunk
        url = chunk_url(chunk.page_id, chunk.chunk_index, chunk.title, args.link_mode)
        snippet = (
            make_title_snippet(chunk.text)
            if args.only_title
            else make_snippet(chunk.text, args.snippet_chars)
        )
        result.hits.append(
            HitView(
                rank=rank,
                title=chunk.title or str(chunk.page_id),
                page_id=chunk.page_id,
                chunk_number=chunk.chunk_index + 1,
                n_chunks=chunk.n_chunks,
                url=url,
                source=hit.source,
                score=float(hit.score),
                text_rank=hit.text_rank,
                vector_rank=hit.vector_rank,
                snippet=snippet,
                chunk_href=open_link(root, chunk_url(chunk.page_id, chunk.chunk_index)),
                article_href=open_link(root, f"{WIKI_BASE_URL}{chunk.page_id}"),
            )
        )
    return result


def open_page(tools: WikiTools, root: str, url: str) -> OpenResult:
    """The ``open_url`` observation for ``url`` and links to the neighbouring chunks and the article."""
    start = time.perf_counter()
    observation = tools.call_tool("open_url", json.dumps({"url": url}, ensure_ascii=False))
    result = OpenResult(url, observation, "error")
    target = parse_wiki_url(url)
    if target is None:
        return result
    try:
        page_id = tools.backend.resolve_page(target.identifier)
        chunks = tools.backend.page_chunks(page_id) if page_id is not None else []
    except Exception:  # noqa: BLE001 - the observation already says what went wrong
        return result
    result.elapsed_ms = (time.perf_counter() - start) * 1000
    if not chunks or (target.chunk is not None and target.chunk > len(chunks)):
        return result
    result.title, result.page_id, result.n_chunks = chunks[0].title, page_id, len(chunks)
    result.kind = "article" if target.chunk is None else "chunk"
    result.chunk_number = target.chunk
    result.article_href = open_link(root, f"{WIKI_BASE_URL}{page_id}")
    result.chunks = [
        ChunkLink(n, open_link(root, chunk_url(page_id, n - 1)), n == target.chunk)
        for n in range(1, len(chunks) + 1)
    ]
    if target.chunk is not None:
        if target.chunk > 1:
            result.prev_href = result.chunks[target.chunk - 2].href
        if target.chunk < len(chunks):
            result.next_href = result.chunks[target.chunk].href
    return result
