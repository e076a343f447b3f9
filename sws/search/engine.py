"""The search engine over a ``WikiIndex``: a searcher per method (the shape of ``sws.search.searcher``), the
title searcher, and page lookups."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sws.search.dense import DenseSearcher
from sws.search.hybrid import HybridSearcher
from sws.search.keyword import KeywordSearcher, TitleSearcher
from sws.search.searcher import EmbeddingSearcher, Searcher
from sws.types import SEARCH_METHODS, Chunk, Hit

if TYPE_CHECKING:  # imported lazily: sws.index loads Tantivy, which the tool layer's clients do not need
    import numpy as np

    from sws.index import WikiIndex

MAX_REDIRECT_HOPS = 3
RANDOM_PAGE_DRAWS = 200  # the reference's retry budget for a random page (CONTRACT §2.6)


class _IndexEmbedder:
    """The index's query embedder, made when a query is first embedded (``WikiIndex.embedder`` is lazy)."""

    def __init__(self, index: WikiIndex):
        self.index = index

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        return self.index.embedder.embed_queries(queries)


class SearchEngine:
    """Implements ``sws.types.SearchBackend`` over an opened index: a searcher per method, the title searcher,
    and the page lookups.

    Args:
        index: the opened, verified index (its ``embedder`` embeds the queries).
    """

    def __init__(self, index: WikiIndex):
        self.index = index
        self._keyword = index.keyword
        keywords = KeywordSearcher(index.keyword)
        dense = DenseSearcher(index.dense, index.keyword, _IndexEmbedder(index))
        self.searchers: dict[str, Searcher] = {
            "rrf": HybridSearcher(keywords, dense),
            "keywords": keywords,
            "vector": dense,
        }
        self.titles = TitleSearcher(index.keyword)

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> SearchEngine:
        """``WikiIndex.open(path, **kwargs)`` wrapped in an engine."""
        from sws.index import WikiIndex

        return cls(WikiIndex.open(path, **kwargs))

    def searcher(self, method: str) -> Searcher:
        """The searcher of ``method``.

        Raises:
            ValueError: unknown method (the tool layer validates it first).
        """
        try:
            return self.searchers[method]
        except KeyError:
            raise ValueError(
                f"unknown search method {method!r} (known: {', '.join(SEARCH_METHODS)})"
            ) from None

    def search(self, query: str, top_k: int, method: str, vector: np.ndarray | None = None) -> list[Hit]:
        """Top ``top_k`` hits by ``method``; odd query text never raises (an embedder failure does).

        Args:
            vector: the query's embedding, computed elsewhere: a vector or rrf search then embeds nothing.

        Raises:
            ValueError: unknown method.
        """
        searcher = self.searcher(method)
        if vector is None or method == "keywords":
            return searcher.search(query, top_k)
        return cast("EmbeddingSearcher", searcher).search_embedded(query, vector, top_k)

    def batch_search(
        self, queries: list[str], top_k: int, method: str, vectors: np.ndarray | None = None
    ) -> list[list[Hit]]:
        """:meth:`search` for each query, with one embedding forward pass and one FAISS call for the batch."""
        searcher = self.searcher(method)
        if vectors is None or method == "keywords":
            return searcher.batch_search(queries, top_k)
        return cast("EmbeddingSearcher", searcher).batch_search_embedded(queries, vectors, top_k)

    def search_titles(self, query: str, top_k: int) -> list[Hit]:
        """Title search (BM25 on titles alone): one hit per page, carrying its chunk 0."""
        return self.titles.search(query, top_k)

    def batch_search_titles(self, queries: list[str], top_k: int) -> list[list[Hit]]:
        """:meth:`search_titles` for each query, the chunks of the batch looked up together."""
        return self.titles.batch_search(queries, top_k)

    def resolve_page(self, identifier: str) -> int | None:
        """Page id for a URL identifier: page id, exact title, redirect, case-insensitive title or
        redirect, then the best BM25 title (CONTRACT Part 1, 2)."""
        ident = identifier.strip()
        page_id = int(ident) if ident.isascii() and ident.isdigit() and len(ident) < 19 else None
        if page_id is not None and self._keyword.page_n_chunks(page_id) is not None:
            return page_id
        title = ident.replace("_", " ").strip()
        if not title:
            return None
        for folded in (False, True):
            page = self._keyword.page_by_title(title, folded=folded)
            if page is None:
                page = self._follow_redirect(title, folded)
            if page is not None:
                return page
        best = self._keyword.search_titles(title, 1)
        return best[0].page_id if best else None

    def page_chunks(self, page_id: int) -> list[Chunk]:
        return self._keyword.page_chunks(page_id)

    def random_page(self, rng: random.Random) -> int | None:
        """A page drawn uniformly by ``rng`` (the same seed, the same page), None for an empty index.

        A chunk drawn uniformly keeps its page with probability 1 / (the page's chunk count), which makes
        every page equally likely; after ``RANDOM_PAGE_DRAWS`` rejections the last page drawn is kept.
        """
        chunk = None
        for _ in range(RANDOM_PAGE_DRAWS):
            chunk = self._keyword.chunk_at_row(rng.randrange(self._keyword.num_chunks or 1))
            if chunk is None or rng.random() * chunk.n_chunks < 1:
                break
        return chunk.page_id if chunk else None

    def _follow_redirect(self, title: str, folded: bool) -> int | None:
        for _ in range(MAX_REDIRECT_HOPS):
            target = self._keyword.redirect_target(title, folded=folded)
            if target is None:
                return None
            for target_folded in (False, True):
                page = self._keyword.page_by_title(target, folded=target_folded)
                if page is not None:
                    return page
            title, folded = target, False
        return None
