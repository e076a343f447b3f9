"""The records shared by the layers below the agent: a stored chunk (index), a ranked hit (search), the
backend protocol the tool layer needs (env), and the Tantivy panic test the index and the tools share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Chunk:
    """One stored chunk: ``chunk_id`` is ``f"{page_id}_{chunk_index}"``, text starts with its section line(s)."""

    chunk_id: str
    page_id: int
    title: str
    chunk_index: int
    n_chunks: int
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked search result: the chunk plus how it was found (never shown to the model).

    ``source`` is "keywords", "vector", "both" (RRF) or "title"; ranks are 1-based positions in each list.
    """

    chunk: Chunk
    score: float
    source: str
    text_rank: int | None = None
    vector_rank: int | None = None


SEARCH_METHODS = (
    "rrf",
    "keywords",
    "vector",
)  # the contract's method enum; the engine has a searcher for each


class SearchBackend(Protocol):
    """What the tool layer (``sws.env``) needs from a search engine."""

    def search(self, query: str, top_k: int, method: str, vector: Any = None) -> list[Hit]:
        """``method`` is one of :data:`SEARCH_METHODS` (already validated). Never raises on odd query text.
        ``vector``: the query's embedding when it was computed elsewhere (a batched embedding service)."""

    def search_titles(self, query: str, top_k: int) -> list[Hit]:
        """Title search: one hit per page, its chunk 0."""

    def resolve_page(self, identifier: str) -> int | None:
        """Page id for a URL identifier: page id, exact title, redirect, case-insensitive title, best BM25 title."""

    def page_chunks(self, page_id: int) -> list[Chunk]:
        """All chunks of a page in chunk order (empty if the page does not exist)."""


def is_rust_panic(exc: BaseException) -> bool:
    """A panic inside Tantivy (Rust): pyo3's ``PanicException`` derives from ``BaseException``, so
    ``except Exception`` misses it; Tantivy panics on some damaged files instead of raising."""
    return type(exc).__module__ == "pyo3_runtime" and type(exc).__name__ == "PanicException"
