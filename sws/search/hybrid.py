"""Hybrid search: reciprocal rank fusion of a keyword searcher's and a dense searcher's candidate pools."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sws.search.dense import DenseSearcher, hydrate
from sws.search.fusion import RRF_K, Fused, rrf_fuse
from sws.search.keyword import KeywordSearcher
from sws.search.searcher import FETCH
from sws.types import Chunk, Hit


class HybridSearcher:
    """RRF over the ``FETCH * k`` best pages of ``keyword`` and the ``FETCH * k`` nearest chunks of ``dense``
    (CONTRACT §1.8): the fused top ``FETCH * k``, hydrated, at most ``k``.

    Args:
        keyword: the BM25 searcher.
        dense: the vector searcher (its embedder embeds the queries of :meth:`search`).
        k: the RRF constant.
    """

    def __init__(self, keyword: KeywordSearcher, dense: DenseSearcher, k: int = RRF_K):
        self.keyword, self.dense, self.k = keyword, dense, k

    def embed(self, queries: Sequence[str]) -> np.ndarray:
        return self.dense.embed(queries)

    def search(self, query: str, k: int) -> list[Hit]:
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return self._fused(queries, None, k)

    def search_embedded(self, query: str, vector: np.ndarray, k: int) -> list[Hit]:
        return self.batch_search_embedded([query], np.reshape(vector, (1, -1)), k)[0]

    def batch_search_embedded(self, queries: Sequence[str], vectors: np.ndarray, k: int) -> list[list[Hit]]:
        return self._fused(queries, vectors, k)

    def _fused(self, queries: Sequence[str], vectors: np.ndarray | None, k: int) -> list[list[Hit]]:
        """The keyword pools first (a damaged keyword index fails before a model is loaded), then the
        vectors (``vectors``, else embedded now), fused and hydrated."""
        if k < 1:
            return [[] for _ in queries]
        pool = FETCH * k
        texts = self.keyword.batch_search(queries, pool)
        vector_pools = self.dense.candidates(self.embed(queries) if vectors is None else vectors, pool)
        fused = [
            rrf_fuse([h.chunk.chunk_id for h in text], [chunk_id for chunk_id, _ in candidates], self.k)[
                :pool
            ]
            for text, candidates in zip(texts, vector_pools, strict=True)
        ]
        known = {h.chunk.chunk_id: h.chunk for text in texts for h in text}
        wanted = [f.chunk_id for ranked in fused for f in ranked[:k] if f.chunk_id not in known]
        known |= self.dense.chunks.chunks_by_id(wanted)  # the batch's vector-only chunks, looked up at once
        return [
            _hits(ranked, hydrate(self.dense.chunks, [f.chunk_id for f in ranked], known, k))
            for ranked in fused
        ]


def _hits(fused: list[Fused], chunks: dict[str, Chunk]) -> list[Hit]:
    return [
        Hit(chunks[f.chunk_id], f.score, f.source, text_rank=f.text_rank, vector_rank=f.vector_rank)
        for f in fused
        if f.chunk_id in chunks
    ]
