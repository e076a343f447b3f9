"""The ``search`` observation: snippets (CONTRACT.md §1.6) and the hit list (§1.9)."""

from __future__ import annotations

import re

from sws.env.urls import chunk_url
from sws.types import Hit

NO_RESULTS = "No results found."
SNIPPET_CHARS = 1024  # what the agent path always sends as max_chars_per_result
TITLE_SNIPPET_CHARS = 500

_WHITESPACE_RUN = re.compile(r"\s+")


def make_snippet(text: str, max_chars: int = SNIPPET_CHARS) -> str:
    """The raw text, or a hard cut at ``max_chars`` code points plus ``... (Omitted N characters)``."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}... (Omitted {len(text) - max_chars} characters)"


def make_title_snippet(text: str) -> str:
    """One line from the first 500 characters: newlines and ``█`` become spaces, whitespace runs collapse."""
    head = text[:TITLE_SNIPPET_CHARS].strip().replace("\n", " ").replace("█", " ")
    return _WHITESPACE_RUN.sub(" ", head).strip()


def render_hits(
    hits: list[Hit],
    *,
    title_snippets: bool = False,
    snippet_chars: int = SNIPPET_CHARS,
    link_mode: str = "wikiid",
) -> str:
    """Per hit ``{i}. [{title}]({url})``, ``   - {snippet}`` (left out when blank) and a blank line; stripped."""
    lines: list[str] = []
    for i, hit in enumerate(hits, 1):
        chunk = hit.chunk
        title = chunk.title or str(chunk.page_id)
        snippet = (
            make_title_snippet(chunk.text) if title_snippets else make_snippet(chunk.text, snippet_chars)
        )
        lines.append(f"{i}. [{title}]({chunk_url(chunk.page_id, chunk.chunk_index, chunk.title, link_mode)})")
        if snippet.strip():
            lines.append(f"   - {snippet}")
        lines.append("")
    return "\n".join(lines).strip() or NO_RESULTS
