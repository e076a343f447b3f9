"""The in-process floor of vector and rrf search (``serve_floor.py``): batched query embeddings, then the engine."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def floor_round(
    engine: Any, queries: list[str], method: str, batch: int, threads: int, seconds: float
) -> dict[str, Any]:
    """Batches of ``queries`` embedded in one forward pass, then searched with their vectors by ``threads``
    threads, for ``seconds`` (at least one batch, however late this thread gets to run)."""
    done = 0
    with ThreadPoolExecutor(threads) as pool:
        start = time.perf_counter()
        while not done or time.perf_counter() - start < seconds:
            batch_queries = [queries[(done + i) % len(queries)] for i in range(batch)]
            vectors = engine.searcher(method).embed(batch_queries)
            list(pool.map(lambda qv: engine.search(qv[0], 10, method, qv[1]), zip(batch_queries, vectors)))
            done += batch
        elapsed = time.perf_counter() - start
    return {"threads": threads, "batch": batch, "requests": done, "qps": round(done / elapsed, 1)}
