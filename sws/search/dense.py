"""Vector search: FAISS candidates for the query embeddings, hydrated with their chunks from Tantivy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from sws.search.searcher import FETCH
from sws.types import Chunk, Hit

if TYPE_CHECKING:
    from sws.index.dense import FaissSearcher
    from sws.index.keyword import TantivySearcher

Candidates = list[tuple[str, float]]  # (chunk id, score), best first


class QueryEncoder(Protocol):
    def embed_queries(self, queries: list[str]) -> np.ndarray:
        """L2-normalised rows, the task's instruction applied (``sws.index.embedders.Embedder``)."""


def hydrate(
    chunks: TantivySearcher, chunk_ids: list[str], known: dict[str, Chunk], limit: int
) -> dict[str, Chunk]:
    """The first ``limit`` of ``chunk_ids`` (in order) that exist, looking up only as many as needed: ids that
    fail (unknown to the keyword index) are skipped and the next ones tried (CONTRACT §1.8)."""
    found: dict[str, Chunk] = {}
    start = 0
    while len(found) < limit and start < len(chunk_ids):
        batch = chunk_ids[start : start + limit - len(found)]
        start += len(batch)
        known |= chunks.chunks_by_id([chunk_id for chunk_id in batch if chunk_id not in known])
        found |= {chunk_id: known[chunk_id] for chunk_id in batch if chunk_id in known}
    return found


class DenseSearcher:
    """Inner-product search of the query embeddings over the HNSW shards; a batch is one embedding forward pass
    and one FAISS call per shard.

    Args:
        dense: the FAISS shards.
        chunks: the keyword index that stores the chunks.
        embedder: the index's query embedder (``embed_queries``); only :meth:`search` and :meth:`batch_search`
            use it.
    """

    source = "vector"

    def __init__(self, dense: FaissSearcher, chunks: TantivySearcher, embedder: QueryEncoder | None):
        self.dense, self.chunks, self.embedder = dense, chunks, embedder

    def embed(self, queries: Sequence[str]) -> np.ndarray:
        if self.embedder is None:
            raise RuntimeError("this dense searcher has no query embedder: pass the query vectors")
        return self.embedder.embed_queries(list(queries))

    def search(self, query: str, k: int) -> list[Hit]:
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return self.batch_search_vectors(self.embed(queries), k)

    def search_embedded(self, query: str, vector: np.ndarray, k: int) -> list[Hit]:
        return self.search_vector(vector, k)

    def batch_search_embedded(self, queries: Sequence[str], vectors: np.ndarray, k: int) -> list[list[Hit]]:
        return self.batch_search_vectors(vectors, k)

    def search_vector(self, vector: np.ndarray, k: int) -> list[Hit]:
        """The top ``k`` chunks for one query vector."""
        return self.batch_search_vectors(np.reshape(vector, (1, -1)), k)[0]

    def batch_search_vectors(self, vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """The top ``k`` chunks for each row of ``vectors``: the batch's chunks are looked up together, a
        candidate missing from the keyword index is replaced by the next (:func:`hydrate`)."""
        pools = self.candidates(vectors, FETCH * k) if k >= 1 else [[] for _ in vectors]
        known = self.chunks.chunks_by_id([chunk_id for pool in pools for chunk_id, _ in pool[:k]])
        results = []
        for pool in pools:
            chunks = hydrate(self.chunks, [chunk_id for chunk_id, _ in pool], known, k)
            results.append(
                [
                    Hit(chunks[chunk_id], score, self.source, vector_rank=rank)
                    for rank, (chunk_id, score) in enumerate(pool, 1)
                    if chunk_id in chunks
                ]
            )
        return results

    def candidates(self, vectors: np.ndarray, k: int) -> list[Candidates]:
        """The ``k`` nearest chunk ids with their scores, per row of ``vectors`` (ids of every row read at once)."""
        found = self.dense.search_many(vectors, k)
        ids = iter(self.dense.chunk_ids([row for rows in found for row, _ in rows]))
        return [[(next(ids), score) for _, score in rows] for rows in found]
