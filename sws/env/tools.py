"""One dispatch for the model's tool calls: ``WikiTools.call_tool(name, arguments_json) -> observation``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sws.env.arguments import (
    DEFAULT_MAX_QUERY_CHARS,
    DEFAULT_MAX_TOP_K,
    DEFAULT_TOP_K,
    SearchArgs,
    parse_arguments,
    required_url,
)
from sws.env.hits import SNIPPET_CHARS, render_hits
from sws.env.observations import error_observation, submit_observation
from sws.env.schemas import tool_schemas
from sws.env.urls import INVALID_URL_MESSAGE, LINK_MODES, WikiUrl, parse_wiki_url
from sws.env.views import (
    chunk_not_found,
    missing_document,
    no_document,
    render_article_view,
    render_chunk_view,
)
from sws.types import Chunk, Hit, SearchBackend


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


class WikiTools:
    """The ``search``, ``open_url`` and ``submit_answer`` tools over a search backend.

    Stateless: as thread-safe as the backend.

    Args:
        backend: the search engine (``sws.types.SearchBackend``).
        max_top_k: upper clamp for ``top_k`` (the reference has none).
        max_query_chars: longer queries are an error observation (the reference has no bound).
        link_mode: ``"wikiid"`` (default, ``.../wiki/<page_id>#chunk-N``) or ``"title"`` hit links.
        snippet_chars: snippet cut, 32..100000; the agent path of the reference always uses 1024.
        article_max_chars: optional cap on the full-article view; ``None`` (default) returns it whole.
        search_description: search schema wording, ``"markdown"`` (repository, default) or ``"ranked"`` (paper).
    """

    def __init__(
        self,
        backend: SearchBackend,
        *,
        max_top_k: int = DEFAULT_MAX_TOP_K,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
        link_mode: str = "wikiid",
        snippet_chars: int = SNIPPET_CHARS,
        article_max_chars: int | None = None,
        search_description: str = "markdown",
    ) -> None:
        if max_top_k < 1:
            raise ValueError(f"max_top_k={max_top_k}: must be >= 1")
        if link_mode not in LINK_MODES:
            raise ValueError(f"link_mode={link_mode!r}: expected one of {list(LINK_MODES)}")
        if not 32 <= snippet_chars <= 100_000:
            raise ValueError(f"snippet_chars={snippet_chars}: must be within 32..100000")
        if article_max_chars is not None and article_max_chars < 1:
            raise ValueError(f"article_max_chars={article_max_chars}: must be >= 1 or None")
        self.backend = backend
        self.max_top_k = max_top_k
        self.max_query_chars = max_query_chars
        self.link_mode = link_mode
        self.snippet_chars = snippet_chars
        self.article_max_chars = article_max_chars
        self.schemas = tool_schemas(search_description)

    def call_tool(self, name: str, arguments_json: str | None) -> str:
        """Run one model tool call and return its observation; never raises.

        Any exception (bad JSON or arguments, unknown tool, backend failure) becomes the error observation,
        whose ``arguments`` field is the raw string (``"{}"`` when the model sent none).
        """
        tool = str(name or "").strip()
        raw = arguments_json or "{}"
        try:
            return self.execute(tool, raw)
        except Exception as error:  # noqa: BLE001 - the contract: every failure becomes an observation
            return error_observation(tool, raw if isinstance(raw, str) else repr(raw), error)

    def execute(self, name: str, arguments_json: str) -> str:
        """Like ``call_tool`` but raising: for callers that treat backend failures as fatal."""
        args = parse_arguments(arguments_json)
        if name == "search":
            return self._search(SearchArgs.parse(args, self.max_top_k, self.max_query_chars))
        if name == "open_url":
            return self.open_url(required_url(args))
        if name == "submit_answer":
            return submit_observation(args.get("answer"))
        raise ValueError(f"Unknown tool: {name}")

    def search(
        self, query: Any, top_k: Any = DEFAULT_TOP_K, only_title: Any = False, method: Any = "rrf"
    ) -> str:
        """The ``search`` observation, with the same argument handling as a model call (raises ValueError)."""
        raw = {"query": query, "top_k": top_k, "only_title": only_title, "method": method}
        return self._search(SearchArgs.parse(raw, self.max_top_k, self.max_query_chars))

    def open_url(self, url: str) -> str:
        """The ``open_url`` observation: a chunk view, an article view or one of the contract's errors."""
        return self.open(url).content

    def open(self, url: str) -> OpenedUrl:
        """:meth:`open_url` with its outcome (for structured answers)."""
        target = parse_wiki_url(url)
        if target is None:
            return OpenedUrl(INVALID_URL_MESSAGE, "invalid_url")
        page_id = self.backend.resolve_page(target.identifier)
        if page_id is None:
            return OpenedUrl(no_document(target.identifier), "not_found", target)
        chunks = self.backend.page_chunks(page_id)
        if not chunks:
            return OpenedUrl(missing_document(page_id), "not_found", target, page_id)
        title = chunks[0].title
        if target.chunk is None:
            texts = [chunk.text for chunk in chunks]
            content = render_article_view(title, page_id, texts, self.article_max_chars)
        elif target.chunk > len(chunks):
            return OpenedUrl(
                chunk_not_found(target.identifier, target.chunk), "chunk_not_found", target, page_id, chunks
            )
        else:
            content = render_chunk_view(title, target.chunk, len(chunks), chunks[target.chunk - 1].text)
        return OpenedUrl(content, "found", target, page_id, chunks)

    def search_hits(self, args: SearchArgs) -> list[Hit]:
        """The hits behind a ``search`` observation, at most ``args.top_k`` (for structured answers)."""
        if args.only_title:
            hits = self.backend.search_titles(args.query, args.top_k)
        else:
            hits = self.backend.search(args.query, args.top_k, args.method)
        return hits[: args.top_k]

    def render_search(
        self,
        args: SearchArgs,
        hits: list[Hit],
        *,
        snippet_chars: int | None = None,
        link_mode: str | None = None,
    ) -> str:
        """The ``search`` observation of ``hits`` (from :meth:`search_hits`); ``snippet_chars`` and
        ``link_mode`` override the configured ones for this call (the reference server's
        ``max_chars_per_result`` and ``link_mode``)."""
        return render_hits(
            hits,
            title_snippets=args.only_title,
            snippet_chars=snippet_chars or self.snippet_chars,
            link_mode=link_mode or self.link_mode,
        )

    def _search(self, args: SearchArgs) -> str:
        return self.render_search(args, self.search_hits(args))
