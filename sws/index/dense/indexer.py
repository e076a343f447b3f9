"""Build FAISS HNSW shards (fp16 scalar quantiser, inner product) over normalised vectors in corpus order."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sws.index.errors import IndexCorruptError
from sws.index.files import ids_digest
from sws.index.vectors import VectorSet

CHUNK_IDS_FILE = "chunk_ids.arrow"
BUILDERS = ("auto", "cpu", "gpu")


def shard_file(i: int) -> str:
    return f"shard-{i:05d}.faiss"


def write_chunk_ids(path: Path, chunk_ids: list[str]) -> None:
    """Row -> chunk id as an Arrow IPC file (memory-mapped on open; no pickle)."""
    table = pa.table({"chunk_id": pa.array(chunk_ids, pa.string())})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


class FaissIndexer:
    """HNSW over the vectors, row i = chunk row i (FAISS HNSW has no ``add_with_ids``; order is the id).

    ``IndexHNSWSQ(dim, QT_fp16, m, METRIC_INNER_PRODUCT)``: 2 bytes per dimension plus the graph
    (about ``2 * m * 4`` bytes per vector at level 0). The defaults reach recall@10 >= 0.95 against
    exact search (``benchmarks/search_hnsw_recall.py``). A multi-threaded build is not bit-for-bit
    repeatable (insertion races); ``threads=1`` is.

    On a GPU (``builder="gpu"``, or ``"auto"`` with faiss-gpu-cuvs and a visible GPU) each shard's graph is
    built by CAGRA and stored as an ``IndexHNSWCagra`` over the same fp16 codes (``sws/index/dense/cagra.py``);
    the whole shard is then held in host memory while it builds (bound it with ``shard_rows``).

    Args:
        m: graph degree (neighbours per node per layer).
        ef_construction: candidate list size while building.
        ef_search: candidate list size at query time (saved in the index, overridable on open).
        shard_rows: rows per shard (0: one shard); shards are searched together.
        threads: OpenMP threads while building (0: FAISS default).
        add_batch: rows handed to FAISS per ``add`` call (CPU build).
        builder: "cpu", "gpu" or "auto" (the GPU when faiss can build there).
    """

    def __init__(
        self,
        m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
        shard_rows: int = 0,
        threads: int = 0,
        add_batch: int = 65536,
        builder: str = "auto",
    ):
        from sws.index.dense.cagra import gpu_build_available

        if builder not in BUILDERS:
            raise ValueError(f"builder={builder!r}: expected one of {list(BUILDERS)}")
        if min(m, ef_construction, ef_search, add_batch) < 1 or shard_rows < 0 or threads < 0:
            raise ValueError(
                f"need m, ef_construction, ef_search, add_batch >= 1 and shard_rows, threads >= 0; got "
                f"{m=}, {ef_construction=}, {ef_search=}, {add_batch=}, {shard_rows=}, {threads=}"
            )
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self.shard_rows, self.threads, self.add_batch = shard_rows, threads, add_batch
        self.builder = ("gpu" if gpu_build_available() else "cpu") if builder == "auto" else builder

    def params(self) -> dict[str, Any]:
        """What changes the index contents (part of the index fingerprint)."""
        params = {
            "type": "IndexHNSWSQ/fp16/ip",
            "m": self.m,
            "ef_construction": self.ef_construction,
            "ef_search": self.ef_search,
            "shard_rows": self.shard_rows,
        }
        if self.builder == "gpu":
            params |= {"type": "IndexHNSWCagra/fp16/ip", "builder": "cagra"}
        return params

    def build(self, vectors: VectorSet, chunk_ids: Iterable[str], out: str | Path) -> dict[str, Any]:
        """Write ``shard-*.faiss`` and ``chunk_ids.arrow`` under ``out``; returns shard layout and digests."""
        import faiss

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        if self.threads:
            faiss.omp_set_num_threads(self.threads)
        ids = list(chunk_ids)
        if len(ids) != vectors.rows:
            raise IndexCorruptError(f"{vectors.path} holds {vectors.rows} vectors for {len(ids)} chunks")
        started = time.perf_counter()
        per_shard = self.shard_rows or vectors.rows
        shards: list[dict[str, Any]] = []
        index, buffer, row = None, [], 0
        for block in vectors.iter_blocks():
            while len(block):
                room = per_shard - row % per_shard
                piece, block = block[:room], block[room:]
                buffer.append(piece)
                row += len(piece)
                shard_full = row % per_shard == 0
                batch_full = self.builder == "cpu" and sum(len(b) for b in buffer) >= self.add_batch
                if shard_full or batch_full:
                    index, buffer = self._extend(index, buffer), []
                if shard_full:
                    shards.append(self._write(index, out, len(shards), row - index.ntotal))
                    index = None
        if buffer:
            index = self._extend(index, buffer)
        if index is not None:
            shards.append(self._write(index, out, len(shards), row - index.ntotal))
        write_chunk_ids(out / CHUNK_IDS_FILE, ids)
        return {
            "rows": row,
            "dim": vectors.dim,
            "shards": shards,
            "seconds": round(time.perf_counter() - started, 3),
            "chunk_ids_sha256": ids_digest(ids),
        }

    def _extend(self, index: Any, buffer: list[np.ndarray]) -> Any:
        """``index`` (None: a new one) with the rows of ``buffer`` added; on the GPU, the whole shard at once."""
        x = np.ascontiguousarray(np.concatenate(buffer), dtype=np.float32)
        if self.builder == "gpu":
            from sws.index.dense.cagra import build_cagra_hnsw

            return build_cagra_hnsw(x, self.m, self.ef_construction, self.ef_search)
        index = self._new_index(x.shape[1]) if index is None else index
        index.add(x)
        return index

    def _new_index(self, dim: int) -> Any:
        import faiss

        index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_fp16, self.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = self.ef_construction
        index.hnsw.efSearch = self.ef_search
        return index

    @staticmethod
    def _write(index: Any, out: Path, i: int, start: int) -> dict[str, Any]:
        import faiss

        faiss.write_index(index, str(out / shard_file(i)))
        return {"file": shard_file(i), "start": start, "rows": int(index.ntotal)}
