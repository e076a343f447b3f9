"""Read side of the FAISS shards: top-k rows by the index's metric, merged over shards, and row -> chunk id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sws.index.dense.indexer import CHUNK_IDS_FILE
from sws.index.dense.mapped_pages import release_mapped_pages
from sws.index.errors import IndexCorruptError, IndexMissingError


def read_faiss_index(path: Path) -> Any:
    """The shard memory-mapped (``IO_FLAG_MMAP_IFC``: faiss 1.15 maps the vector codes and the HNSW neighbour
    arrays; it reads in only levels and offsets, 12 bytes a vector): replicas on one node share the file through
    the page cache, and the pages FAISS's validation read at open are given back (``mapped_pages``)."""
    import faiss

    if not path.is_file():
        raise IndexMissingError(f"FAISS index missing: {path}")
    try:
        index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
    except RuntimeError as exc:
        raise IndexCorruptError(f"cannot read FAISS index {path}: {str(exc).splitlines()[-1]}") from exc
    release_mapped_pages(path)
    return index


def metric_of(index: Any, path: Path) -> str:
    """The index's metric: "ip" (inner product: higher is nearer) or "l2" (squared distance: lower is nearer).

    Raises:
        IndexCorruptError: any other FAISS metric.
    """
    import faiss

    metrics = {faiss.METRIC_INNER_PRODUCT: "ip", faiss.METRIC_L2: "l2"}
    if index.metric_type not in metrics:
        raise IndexCorruptError(
            f"FAISS index {path} uses metric {index.metric_type}: only inner product and L2 are searched"
        )
    return metrics[index.metric_type]


def read_chunk_ids(path: Path) -> pa.ChunkedArray:
    if not path.is_file():
        raise IndexMissingError(f"chunk-id file missing: {path}")
    try:
        return pa.ipc.open_file(pa.memory_map(str(path))).read_all().column("chunk_id")
    except (pa.ArrowException, KeyError) as exc:
        raise IndexCorruptError(f"cannot read chunk ids {path}: {exc}") from exc


def shared_shape(shards: list[tuple[int, Any]], path: Path) -> tuple[int, str]:
    """The dimension and metric (``metric_of``) of all the shards.

    Raises:
        IndexCorruptError: the shards differ in either.
    """
    dims = {index.d for _, index in shards}
    metrics = {metric_of(index, path) for _, index in shards}
    if len(dims) != 1 or len(metrics) != 1:
        raise IndexCorruptError(
            f"FAISS shards under {path} have different dimensions or metrics: {sorted(dims)}, {sorted(metrics)}"
        )
    return dims.pop(), metrics.pop()


class FaissSearcher:
    """HNSW shards searched together; row r of the shard sequence is chunk row r. Hits rank by the shards'
    metric: descending inner product (what sws builds) or, for an L2 index, ascending distance.

    Args:
        path: directory with ``shard-*.faiss`` and ``chunk_ids.arrow``.
        shards: ``[{"file", "start", "rows"}]`` from the index manifest.
        ef_search: query-time candidate list size (None: the value saved in each shard).
    """

    ties_in_faiss_order = False  # equal scores: by row (shards searched together), or as FAISS returned them

    def __init__(self, path: str | Path, shards: list[dict[str, Any]], ef_search: int | None = None):
        path = Path(path)
        self.path, self.ef_search = path, ef_search
        self._shards = []
        for shard in shards:
            index = read_faiss_index(path / shard["file"])
            if index.ntotal != shard["rows"]:
                raise IndexCorruptError(
                    f"{path / shard['file']} holds {index.ntotal} vectors, manifest says {shard['rows']}"
                )
            self._shards.append((int(shard["start"]), index))
        self._chunk_ids = read_chunk_ids(path / CHUNK_IDS_FILE)
        if len(self._chunk_ids) != self.ntotal:
            raise IndexCorruptError(
                f"{path / CHUNK_IDS_FILE} has {len(self._chunk_ids)} ids for {self.ntotal} vectors"
            )
        self.dim, self.metric = shared_shape(self._shards, path)

    @property
    def shards(self) -> list[tuple[int, Any]]:
        """``(first row, faiss index)`` per shard."""
        return list(self._shards)

    @property
    def ntotal(self) -> int:
        return sum(index.ntotal for _, index in self._shards)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` ``(row, score)`` for one normalised query vector, nearest first (``metric``), then by row
        (:attr:`ties_in_faiss_order`: as FAISS returned them)."""
        return self.search_many(np.reshape(query, (1, -1)), k)[0]

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries`` (n x dim): one FAISS call per shard for all n."""
        import faiss

        q = np.ascontiguousarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"query vectors of shape {q.shape}: expected (n, {self.dim})")
        if k < 1 or not len(q):
            return [[] for _ in q]
        params = faiss.SearchParametersHNSW(efSearch=self.ef_search) if self.ef_search else None
        found: list[list[tuple[int, float]]] = [[] for _ in q]
        for start, index in self._shards:
            scores, rows = index.search(q, min(k, index.ntotal), params=params)
            for hits, row_ids, row_scores in zip(found, rows, scores):
                hits.extend((start + int(r), float(s)) for r, s in zip(row_ids, row_scores) if r >= 0)
        sign = 1.0 if self.metric == "l2" else -1.0
        if self.ties_in_faiss_order:  # a stable sort keeps FAISS's own order among equal scores
            return [sorted(hits, key=lambda rs: sign * rs[1])[:k] for hits in found]
        return [sorted(hits, key=lambda rs: (sign * rs[1], rs[0]))[:k] for hits in found]

    def chunk_ids(self, rows: list[int]) -> list[str]:
        return self._chunk_ids.take(pa.array(rows, pa.int64())).to_pylist() if rows else []

    def all_chunk_ids(self) -> pa.ChunkedArray:
        return self._chunk_ids
