"""The in-process floor of vector and rrf search (``serve_floor.py``): batched query embeddings, then the engine."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from sws.index.embedders.base import Embedder, format_query


class PrefetchedEmbedder(Embedder):
    """The index's query embedder, with a whole batch's vectors computed in one forward pass up front."""

    kind = "prefetched"

    def __init__(self, inner: Embedder):
        super().__init__(inner.model, inner.query_task)
        self.inner, self._rows = inner, {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def prefetch(self, queries: list[str]) -> None:
        texts = [format_query(q, self.query_task) for q in queries]
        self._rows = dict(zip(texts, self.inner.embed_documents(texts), strict=True))

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._rows[text] for text in texts])


def floor_round(
    engine: Any,
    embedder: PrefetchedEmbedder,
    queries: list[str],
    method: str,
    batch: int,
    threads: int,
    seconds: float,
) -> dict[str, Any]:
    """Batches of ``queries`` embedded then searched by ``threads`` threads, for ``seconds`` (at least one batch,
    however late this thread gets to run)."""
    done = 0
    with ThreadPoolExecutor(threads) as pool:
        start = time.perf_counter()
        while not done or time.perf_counter() - start < seconds:
            batch_queries = [queries[(done + i) % len(queries)] for i in range(batch)]
            embedder.prefetch(batch_queries)
            list(pool.map(lambda q: engine.search(q, 10, method), batch_queries))
            done += batch
        elapsed = time.perf_counter() - start
    return {"threads": threads, "batch": batch, "requests": done, "qps": round(done / elapsed, 1)}
