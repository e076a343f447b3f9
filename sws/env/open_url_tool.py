"""The ``open_url`` tool (CONTRACT.md §2): its schema, its argument and the page it opens."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sws.env.tool import DEFAULT_OPTIONS, Tool, ToolOptions, function_schema
from sws.env.urls import INVALID_URL_MESSAGE, WikiUrl, parse_wiki_url
from sws.env.views import (
    chunk_not_found,
    missing_document,
    no_document,
    render_article_view,
    render_chunk_view,
)
from sws.types import Chunk, SearchBackend


def open_url_schema(options: ToolOptions) -> dict[str, Any]:
    """§2.1 byte for byte."""
    return function_schema(
        "open_url",
        "Open a URL. If URL has #chunk-N suffix, returns that chunk; "
        "remove the #chunk-N suffix to fetch the full article.",
        {"url": {"type": "string", "description": "URL to open."}},
        ["url"],
    )


@dataclass(frozen=True, slots=True)
class OpenUrlArgs:
    """The URL to open (any string: an invalid one is an observation) and the article view's cap."""

    url: str
    article_max_chars: int | None = None

    @classmethod
    def parse(cls, raw: dict[str, Any], options: ToolOptions = DEFAULT_OPTIONS) -> OpenUrlArgs:
        """``url`` as a string; missing or null is an error."""
        url = raw.get("url")
        if url is None:
            raise ValueError("missing required argument 'url'")
        return cls(str(url), options.article_max_chars)


@dataclass(frozen=True, slots=True)
class OpenedUrl:
    """An ``open_url`` outcome: the observation and what it showed.

    ``outcome`` is ``"found"``, ``"invalid_url"``, ``"not_found"`` (no such page) or ``"chunk_not_found"``;
    ``chunks`` are the page's chunks when it exists.
    """

    content: str
    outcome: str
    target: WikiUrl | None = None
    page_id: int | None = None
    chunks: list[Chunk] = field(default_factory=list)


def open_page(backend: SearchBackend, args: OpenUrlArgs) -> OpenedUrl:
    """The ``open_url`` observation with its outcome: a chunk view, an article view or a contract error."""
    target = parse_wiki_url(args.url)
    if target is None:
        return OpenedUrl(INVALID_URL_MESSAGE, "invalid_url")
    page_id = backend.resolve_page(target.identifier)
    if page_id is None:
        return OpenedUrl(no_document(target.identifier), "not_found", target)
    chunks = backend.page_chunks(page_id)
    if not chunks:
        return OpenedUrl(missing_document(page_id), "not_found", target, page_id)
    title = chunks[0].title
    if target.chunk is None:
        texts = [chunk.text for chunk in chunks]
        content = render_article_view(title, page_id, texts, args.article_max_chars)
    elif target.chunk > len(chunks):
        return OpenedUrl(
            chunk_not_found(target.identifier, target.chunk), "chunk_not_found", target, page_id, chunks
        )
    else:
        content = render_chunk_view(title, target.chunk, len(chunks), chunks[target.chunk - 1].text)
    return OpenedUrl(content, "found", target, page_id, chunks)


def _run(backend: SearchBackend, args: OpenUrlArgs) -> str:
    return open_page(backend, args).content


OPEN_URL = Tool("open_url", open_url_schema, OpenUrlArgs, _run)
