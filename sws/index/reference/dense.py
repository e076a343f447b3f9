"""The reference's ``index.faiss`` searched as sws searches its own shards: one HNSW index, memory-mapped,
its rows named by the chunk keys (``keys.py``) instead of ``ids.pkl``'s Python list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sws.index.dense.searcher import FaissSearcher, read_faiss_index, shared_shape
from sws.index.errors import IndexCorruptError
from sws.index.reference.keys import ChunkKeys


def hnsw_params(index: Any, path: Path) -> dict[str, Any]:
    """``type`` (as sws names its own: ``IndexHNSWSQ/fp16/ip``), ``metric``, ``m``, ``ef_search``,
    ``ef_construction`` and ``dim``, read from an HNSW-family index.

    Raises:
        IndexCorruptError: another index type (an IVF, a flat or an id-mapped index) or metric.
    """
    import faiss

    typed = faiss.downcast_index(index)  # a view: ``index`` keeps owning the FAISS object
    kind = type(typed).__name__
    if not kind.startswith("IndexHNSW"):
        raise IndexCorruptError(
            f"FAISS index {path} is {kind}: sws reads only the HNSW family (IndexHNSWSQ, IndexHNSWFlat, ...), "
            "whose rows are the ids.pkl positions"
        )
    _, metric = shared_shape([(0, index)], path)
    storage = faiss.downcast_index(typed.storage)
    codes = type(storage).__name__
    if isinstance(storage, faiss.IndexScalarQuantizer):
        names = {
            getattr(faiss.ScalarQuantizer, n): n[3:] for n in dir(faiss.ScalarQuantizer) if n[:3] == "QT_"
        }
        codes = names.get(storage.sq.qtype, codes)
    hnsw = typed.hnsw
    return {
        "type": f"{kind}/{codes}/{metric}",
        "metric": metric,
        "m": int(hnsw.nb_neighbors(1)),
        "ef_search": int(hnsw.efSearch),
        "ef_construction": int(hnsw.efConstruction),
        "dim": int(index.d),
    }


class ReferenceFaissSearcher(FaissSearcher):
    """``FaissSearcher`` over the reference's single ``index.faiss`` (memory-mapped as sws's shards are); an L2
    index ranks by ascending distance, and its scores are those distances. Equal scores keep FAISS's order, as
    the reference does (chunks whose first 256 word pieces are the same get the same MiniLM vector).

    Args:
        path: the ``index.faiss`` file.
        keys: its rows' chunk ids.
        ef_search: query-time candidate list size (None: the value saved in the file, as the reference uses).
    """

    ties_in_faiss_order = True

    def __init__(self, path: str | Path, keys: ChunkKeys, ef_search: int | None = None):
        path = Path(path)
        self.path, self.ef_search, self._keys = path.parent, ef_search, keys
        index = read_faiss_index(path)
        self.params = hnsw_params(index, path)
        if index.ntotal != len(keys):
            raise IndexCorruptError(f"{path} holds {index.ntotal} vectors, {keys.path} {len(keys)} chunk ids")
        self._shards = [(0, index)]
        self.dim, self.metric = shared_shape(self._shards, path)

    def chunk_ids(self, rows: list[int]) -> list[str]:
        return self._keys.chunk_ids(rows) if rows else []

    def all_chunk_ids(self) -> Any:
        return self._keys.all_chunk_ids()
