"""The ``search`` tool (CONTRACT.md §1): its schema, its arguments, its hits and their observation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sws.env.arguments import (
    DEFAULT_TOP_K,
    SEARCH_METHODS,
    coerce_bool,
    coerce_top_k,
    normalize_method,
    valid_text,
)
from sws.env.hits import SNIPPET_CHARS, render_hits
from sws.env.tool import DEFAULT_OPTIONS, Tool, ToolOptions, function_schema
from sws.types import Hit, SearchBackend

_DESCRIPTION = (
    "Search offline knowledge base and return {hits} hits with URLs and one-line snippets. "
    'method="rrf" gives hybrid recall/balance (default), method="keywords" is lexical exact-match friendly, '
    'and method="vector" is semantic similarity friendly.'
)

SEARCH_DESCRIPTIONS: dict[str, str] = {
    "markdown": _DESCRIPTION.format(hits="markdown"),  # the repository (default): it made the numbers
    "ranked": _DESCRIPTION.format(hits="ranked"),  # the paper's printed text
}


def search_schema(options: ToolOptions) -> dict[str, Any]:
    """§1.1 byte for byte; ``options.search_description`` keys :data:`SEARCH_DESCRIPTIONS`."""
    if options.search_description not in SEARCH_DESCRIPTIONS:
        raise ValueError(
            f"search_description={options.search_description!r}: expected one of {list(SEARCH_DESCRIPTIONS)}"
        )
    return function_schema(
        "search",
        SEARCH_DESCRIPTIONS[options.search_description],
        {
            "query": {"type": "string", "description": "Search query."},
            "top_k": {
                "type": "integer",
                "description": "Number of hits to return.",
                "default": 10,
                "minimum": 1,
            },
            "only_title": {
                "type": "boolean",
                "description": "Whether to only search article titles.",
                "default": False,
            },
            "method": {
                "type": "string",
                "description": (
                    'Search method: "rrf" (hybrid/balanced, recommended default), '
                    '"keywords" (lexical exact-token matching), "vector" (semantic embedding similarity).'
                ),
                "enum": list(SEARCH_METHODS),
                "default": "rrf",
            },
        },
        ["query"],
    )


@dataclass(frozen=True, slots=True)
class SearchArgs:
    """Validated ``search`` arguments: a non-empty stripped query, 1 <= top_k <= the configured maximum, and
    how to render the hits (the options', or the ``/search`` request's ``max_chars_per_result`` / ``link_mode``)."""

    query: str
    top_k: int
    only_title: bool
    method: str
    snippet_chars: int = SNIPPET_CHARS
    link_mode: str = "wikiid"

    @classmethod
    def parse(cls, raw: dict[str, Any], options: ToolOptions = DEFAULT_OPTIONS) -> SearchArgs:
        """Apply the part 1 policy to the model's raw ``search`` arguments (unknown keys are ignored)."""
        query = checked_query(raw.get("query"), options.max_query_chars)  # its errors come first
        return cls(
            query=query,
            top_k=coerce_top_k(raw.get("top_k", DEFAULT_TOP_K), options.max_top_k),
            only_title=coerce_bool(raw.get("only_title", False), "only_title"),
            method=normalize_method(raw.get("method", "rrf")),
            snippet_chars=options.snippet_chars,
            link_mode=options.link_mode,
        )


def checked_query(value: Any, max_chars: int) -> str:
    """``str(value or "")`` stripped, lone surrogates replaced; empty or over ``max_chars`` is an error."""
    query = valid_text(str(value or "")).strip()
    if not query:
        raise ValueError("query is empty")
    if len(query) > max_chars:
        raise ValueError(f"query is too long ({len(query)} characters; at most {max_chars})")
    return query


def search_hits(backend: SearchBackend, args: SearchArgs) -> list[Hit]:
    """The hits behind a ``search`` observation, at most ``args.top_k``."""
    if args.only_title:
        hits = backend.search_titles(args.query, args.top_k)
    else:
        hits = backend.search(args.query, args.top_k, args.method)
    return hits[: args.top_k]


def render_search(args: SearchArgs, hits: list[Hit]) -> str:
    """The ``search`` observation of ``hits`` (from :func:`search_hits`)."""
    return render_hits(
        hits, title_snippets=args.only_title, snippet_chars=args.snippet_chars, link_mode=args.link_mode
    )


def _run(backend: SearchBackend, args: SearchArgs) -> str:
    return render_search(args, search_hits(backend, args))


SEARCH = Tool("search", search_schema, SearchArgs, _run)
