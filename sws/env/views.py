"""The ``open_url`` observations: chunk view (CONTRACT.md §2.4), article view (§2.5) and error strings."""

from __future__ import annotations

import re

from sws.env.hits import make_snippet

_SECTION_LINE = re.compile(r"Section \s*(\d+(?:\.\d+)*)\s*:(.*)")


def no_document(identifier: str) -> str:
    """The identifier resolved to no page."""
    return f"No document found for identifier: {identifier}"


def missing_document(page_id: int | str) -> str:
    """The identifier resolved to a page id that has no chunks."""
    return f"Document with ID '{page_id}' not found."


def chunk_not_found(identifier: str, number: int) -> str:
    """``#chunk-N`` beyond the page's last chunk; ``identifier`` is the raw one from the URL."""
    return f"Chunk not found: {identifier}#chunk-{number}"


def clean_view_text(text: str) -> str:
    """Clean a view: drop one-repeated-character lines and turn ``Section a.b: X`` lines into headings.

    Dropped: blank table rows, ``---`` rules and, a reference quirk, any one-character line such as ``I``.
    Heading level is clamp(number of components, 2, 6); headings are found per ``str.splitlines`` line.
    """
    kept = "\n".join(line for line in text.split("\n") if not _is_filler(line))
    rendered = "\n".join(_render_heading(line) for line in kept.splitlines())
    return rendered + "\n" if kept.endswith("\n") else rendered


def render_chunk_view(title: str, number: int, n_chunks: int, text: str) -> str:
    """``# {title} (chunk {N}/{n})`` + blank line + the cleaned chunk + ``\\n``; never truncated."""
    return f"# {title} (chunk {number}/{n_chunks})\n\n{clean_view_text(text)}\n"


def render_article_view(title: str, page_id: int, texts: list[str], max_chars: int | None = None) -> str:
    """``# {title} (ID: {id})`` + blank line + the chunks joined by blank lines, cleaned and stripped.

    Whole by default (parity); ``max_chars`` cuts it like a snippet, ``... (Omitted N characters)`` included.
    """
    view = clean_view_text(f"# {title} (ID: {page_id})\n\n" + "\n\n".join(texts)).strip()
    return view if max_chars is None else make_snippet(view, max_chars)


def _is_filler(line: str) -> bool:
    """One character repeated (spaces and tabs aside): ``len(set(compact)) == 1`` without building the set."""
    compact = line.strip().replace(" ", "").replace("\t", "")
    return bool(compact) and compact[0] == compact[-1] and compact.count(compact[0]) == len(compact)


def _render_heading(line: str) -> str:
    if "Section" not in line:  # most lines: skip the regex
        return line
    match = _SECTION_LINE.fullmatch(line.lstrip())
    if match is None:
        return line
    number, rest = match.group(1), match.group(2).strip()
    marks = "#" * min(6, max(2, number.count(".") + 1))
    return f"{marks} Section {number}: {rest}" if rest else f"{marks} Section {number}"
