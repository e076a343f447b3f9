"""A tiny in-memory SearchBackend and the pages it holds, for the tool-contract tests.

It stands in for the search engine only; ranking is a plain count of shared words (ties by page id, then chunk
index), because these tests pin what the tool layer renders, not retrieval quality.
"""

from __future__ import annotations

import re

import pytest

from sws.env import WikiTools
from sws.types import Chunk, Hit

EINSTEIN_LEAD = (
    "Section 0: Preamble\n"
    "Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist.\n"
    "He is best known for the theory of relativity.█ He also  contributed\tto quantum mechanics.\n"
    "\n"
)
EINSTEIN_0 = EINSTEIN_LEAD + "Relativity " * 110  # 1,433 characters: cut at 1024 in search snippets
EINSTEIN_1 = (
    "Section 1: Early life\n"
    "Einstein was born in Ulm.\n"
    "| Year | Event |\n"
    "|---|---|\n"
    "| | |\n"
    "| 1879 | Born |\n"
    "I\n"
    "  Section 1.1:   Family  \n"
    "Section 2.1.3: Deep heading\n"
    "Section 1.2.3.4.5.6.7: Very deep\n"
    "Section 3:\n"
    "# Already a heading\n"
    "Section X: not a number\n"
    "Sectional view\n"
    "===="
)
EINSTEIN_2 = "Section 4: Later life\nHe died in Princeton."

PAGES: dict[int, tuple[str, list[str]]] = {
    736: ("Albert Einstein", [EINSTEIN_0, EINSTEIN_1, EINSTEIN_2]),
    1234567: (
        "Einstein family",
        ["Section 0: Preamble\nThe Einstein family is the family of Albert Einstein."],
    ),
    42: ("C++ (lang)/x", ["Section 0: Preamble\nC++ is a programming language."]),
    1984: ("Nineteen Eighty-Four", ["Section 0: Preamble\nA novel by George Orwell."]),
    7: ("Blank page", ["   \n\t "]),
}
REDIRECTS = {"Einstein": 736, "Ghost page": 999}  # 999: a redirect whose target has no chunks

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class MemoryBackend:
    """``SearchBackend`` over a dict of pages; every call is recorded in ``calls``."""

    def __init__(self, pages: dict[int, tuple[str, list[str]]], redirects: dict[str, int]) -> None:
        self.chunks = {
            page_id: [
                Chunk(f"{page_id}_{i}", page_id, title, i, len(texts), text) for i, text in enumerate(texts)
            ]
            for page_id, (title, texts) in pages.items()
        }
        self.redirects = redirects
        self.calls: list[tuple] = []

    def search(self, query: str, top_k: int, method: str) -> list[Hit]:
        self.calls.append(("search", query, top_k, method))
        assert method in ("rrf", "keywords", "vector")
        terms = _words(query)
        scored = [
            (len(terms & _words(f"{c.title} {c.text}")), c) for chunks in self.chunks.values() for c in chunks
        ]
        scored = sorted(
            (sc for sc in scored if sc[0] > 0), key=lambda sc: (-sc[0], sc[1].page_id, sc[1].chunk_index)
        )
        if method == "keywords":  # best chunk per page
            best: dict[int, tuple[int, Chunk]] = {}
            for sc in scored:
                best.setdefault(sc[1].page_id, sc)
            scored = list(best.values())
        source = {"rrf": "both", "keywords": "keywords", "vector": "vector"}[method]
        return [Hit(c, float(s), source) for s, c in scored[:top_k]]

    def search_titles(self, query: str, top_k: int) -> list[Hit]:
        self.calls.append(("search_titles", query, top_k))
        terms = _words(query)
        scored = [(len(terms & _words(chunks[0].title)), chunks[0]) for chunks in self.chunks.values()]
        scored = sorted((sc for sc in scored if sc[0] > 0), key=lambda sc: (-sc[0], sc[1].page_id))
        return [Hit(c, float(s), "title") for s, c in scored[:top_k]]

    def resolve_page(self, identifier: str) -> int | None:
        self.calls.append(("resolve_page", identifier))
        if identifier.isdecimal() and int(identifier) in self.chunks:
            return int(identifier)
        title = identifier.replace("_", " ").strip()
        by_title = {chunks[0].title: page_id for page_id, chunks in self.chunks.items()}
        if title in by_title:
            return by_title[title]
        if title in self.redirects:
            return self.redirects[title]
        folded = {t.casefold(): page_id for t, page_id in by_title.items()}
        if title.casefold() in folded:
            return folded[title.casefold()]
        best = self.search_titles(title, 1)
        return best[0].chunk.page_id if best else None

    def page_chunks(self, page_id: int) -> list[Chunk]:
        self.calls.append(("page_chunks", page_id))
        return list(self.chunks.get(page_id, []))


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend(PAGES, REDIRECTS)


@pytest.fixture
def tools(backend: MemoryBackend) -> WikiTools:
    return WikiTools(backend)
