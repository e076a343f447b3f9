"""The one shape of every searcher (pyserini's): ``search(query, k)`` and ``batch_search(queries, k)``, each
returning ``sws.types.Hit`` in rank order; searchers that embed their queries also take them embedded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from sws.types import Hit

FETCH = 3  # candidate pools are FETCH * k (CONTRACT §1.4, §1.7, §1.8)


class Searcher(Protocol):
    """Top-``k`` hits for a query, and for many queries at once (same hits as one by one)."""

    def search(self, query: str, k: int) -> list[Hit]:
        """At most ``k`` hits; odd query text never raises (an index or embedder failure does)."""

    def batch_search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """``[search(q, k) for q in queries]``, with the expensive steps done once for the batch."""


class EmbeddingSearcher(Searcher, Protocol):
    """A searcher whose queries are embedded first: it also takes the vectors, computed elsewhere (a batched
    embedding deployment), rows of ``vectors`` in the order of ``queries`` (L2-normalised, as the index's
    embedder gives them from ``embed_queries``)."""

    def embed(self, queries: Sequence[str]) -> np.ndarray:
        """The query vectors, one forward pass for the batch."""

    def search_embedded(self, query: str, vector: np.ndarray, k: int) -> list[Hit]:
        """``search(query, k)`` with ``vector`` as its embedding."""

    def batch_search_embedded(self, queries: Sequence[str], vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """``batch_search(queries, k)`` with ``vectors`` as their embeddings."""
