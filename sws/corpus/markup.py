"""Low-level wikitext scanning: balanced ``{{…}}`` / ``[[…]]`` spans, parameters, tags and comments.

Every scanner here is linear in its input (regex ``finditer`` plus a depth counter), so pathological pages
cost time proportional to their size, never exponential backtracking.
"""

from __future__ import annotations

import bisect
import re
import time

COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Tags dropped with their content. A self-closing form (<ref name=x />) is dropped on its own.
DROPPED_ELEMENTS = (
    "ref",
    "gallery",
    "math",
    "chem",
    "ce",
    "score",
    "timeline",
    "graph",
    "imagemap",
    "mapframe",
    "maplink",
    "templatedata",
    "templatestyles",
    "references",
    "inputbox",
    "categorytree",
    "hiero",
    "section",
)
_DROPPED = "|".join(DROPPED_ELEMENTS)
SELF_CLOSING = re.compile(rf"<(?:{_DROPPED})\b[^>]*/>", re.IGNORECASE)
OPENING = re.compile(rf"<({_DROPPED})\b[^>]*>", re.IGNORECASE)
CLOSING = re.compile(rf"</({_DROPPED})\s*>", re.IGNORECASE)
NOWIKI = re.compile(r"<nowiki\s*>(.*?)</nowiki\s*>|<nowiki\s*/>", re.IGNORECASE | re.DOTALL)
BR = re.compile(r"<br\s*/?\s*>|</br\s*>", re.IGNORECASE)
ANY_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
BRACES = re.compile(r"\{\{|\}\}")
BRACKETS = re.compile(r"\[\[|\]\]")
PARAM_SPLIT = re.compile(r"\{\{|\}\}|\[\[|\]\]|\|")
MAGIC_WORD = re.compile(r"__[A-Z]+__")


class PageTimeout(Exception):
    """The per-page time budget ran out."""


class Deadline:
    """A cooperative per-page time budget: long loops call :meth:`check`."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise PageTimeout


def strip_comments_and_refs(text: str) -> str:
    """Remove comments, references and the other non-prose elements (with their content)."""
    text = COMMENT.sub("", text)
    text = SELF_CLOSING.sub("", text)
    return OPENING.sub("", _drop_elements(text))  # what is left: openings never closed


def _drop_elements(text: str) -> str:
    """Drop each ``<name …>…</name>`` (the first closing of that name after the opening; no nesting, as
    MediaWiki's parser extensions). The closings are indexed once, so unclosed openings cost a lookup each,
    not a scan to the end of the page (a regex ``<ref>.*?</ref>`` is quadratic in them)."""
    closings: dict[str, list[int]] = {}
    for match in CLOSING.finditer(text):
        closings.setdefault(match.group(1).lower(), []).append(match.start())
    ends = {m.start(): m.end() for m in CLOSING.finditer(text)}
    out, kept, pos = [], 0, 0
    while opening := OPENING.search(text, pos):
        starts = closings.get(opening.group(1).lower(), [])
        i = bisect.bisect_left(starts, opening.end())
        if i == len(starts):  # never closed: left for the caller, the search goes on inside it
            pos = opening.start() + 1
            continue
        out.append(text[kept : opening.start()])
        kept = pos = ends[starts[i]]
    out.append(text[kept:])
    return "".join(out)


def balanced_spans(text: str, pattern: re.Pattern = BRACES) -> list[tuple[int, int]]:
    """Top-level ``(start, end)`` spans of balanced ``open … close`` pairs (``{{…}}`` or ``[[…]]``).

    An opener that is never closed is left out, so an unbalanced ``{{`` swallows nothing.
    """
    spans: list[tuple[int, int]] = []  # in order, disjoint: a closing pair drops the spans it encloses
    stack: list[int] = []
    for match in pattern.finditer(text):
        start = match.start()
        if text[start] in "{[":
            stack.append(start)
        elif stack:
            start = stack.pop()
            while spans and spans[-1][0] > start:
                spans.pop()
            spans.append((start, match.end()))
    return spans


def split_params(inner: str) -> list[str]:
    """Split a template's or link's inner text on the ``|`` not nested in ``{{…}}`` or ``[[…]]``."""
    if "{{" not in inner and "[[" not in inner:
        return inner.split("|")
    parts: list[str] = []
    depth = 0
    last = 0
    for match in PARAM_SPLIT.finditer(inner):
        token = match.group()
        if token in ("{{", "[["):
            depth += 1
        elif token in ("}}", "]]"):
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(inner[last : match.start()])
            last = match.end()
    parts.append(inner[last:])
    return parts


def replace_spans(text: str, spans: list[tuple[int, int]], render) -> str:
    """Replace each span with ``render(span_text)``."""
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(render(text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)
