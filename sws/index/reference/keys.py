"""Chunk ids as integer keys: ``<page_id>_<i>`` is ``page_id << 20 | i``, so 10.8M ids are three int64
columns (FAISS row -> key, the keys sorted, and the row of each sorted key) instead of millions of Python
strings. ``import_reference`` writes them once from ``ids.pkl`` (``KEYS_FILE``); an opened index maps them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sws.index.errors import IndexCorruptError, IndexMissingError
from sws.index.files import write_npy
from sws.index.reference.ids import IdsFileError

KEYS_FILE = "chunk_keys.npy"
INDEX_BITS = 20  # chunks per page below 2**20; page ids below 2**43
MAX_PAGE_ID = (1 << (63 - INDEX_BITS)) - 1
_INDEX_MASK = (1 << INDEX_BITS) - 1
_TOO_LARGE = f"a page id of 2**43 or more, or a chunk index of 2**{INDEX_BITS} or more"


def keys_of(ids: list[str], path: str | Path) -> np.ndarray:
    """The keys of chunk ids already of the form ``<page_id>_<i>`` (``check_chunk_ids``), in their order.

    Raises:
        IdsFileError naming ``path``: a page id with a leading zero (sws keeps page ids as integers, so it could
            not be looked up again), a page id of 2**43 or more, or a page of 2**20 chunks or more.
    """
    parts = pc.split_pattern(pa.array(ids, pa.string()), "_")
    pages, index = pc.list_element(parts, 0), pc.list_element(parts, 1)
    padded = pc.and_(pc.starts_with(pages, "0"), pc.greater(pc.utf8_length(pages), 1))
    too_long = pc.or_(pc.greater(pc.utf8_length(pages), 13), pc.greater(pc.utf8_length(index), 7))
    for bad, why in ((padded, "a page id with a leading zero"), (too_long, _TOO_LARGE)):
        if len(ids) and pc.any(bad).as_py():
            first = pc.filter(pa.array(ids, pa.string()), bad)[0].as_py()
            raise IdsFileError(f"{path} holds chunk id {first!r}: {why} (sws keys chunks by integers)")
    page, i = pages.cast(pa.int64()).to_numpy(), index.cast(pa.int64()).to_numpy()
    if len(ids) and (page.max() > MAX_PAGE_ID or i.max() > _INDEX_MASK):
        raise IdsFileError(f"{path} holds {_TOO_LARGE}")
    return (page << INDEX_BITS) | i


def write_keys(path: Path, keys: np.ndarray) -> None:
    """``KEYS_FILE``: rows 0..2 are the key of each FAISS row, the keys sorted, and each sorted key's row."""
    order = np.argsort(keys, kind="stable")
    write_npy(path, np.stack([keys, keys[order], order]))


class ChunkKeys:
    """Row -> chunk id, chunk id -> row and a page's chunk count, from ``KEYS_FILE`` (memory-mapped).

    Args:
        path: the ``KEYS_FILE``.
    """

    def __init__(self, path: str | Path):
        path = Path(path)
        if not path.is_file():
            raise IndexMissingError(f"chunk-key file missing: {path}")
        try:
            table = np.load(path, mmap_mode="r", allow_pickle=False)
        except ValueError as exc:
            raise IndexCorruptError(f"cannot read chunk keys {path}: {exc}") from exc
        if table.ndim != 2 or table.shape[0] != 3 or table.dtype != np.int64:
            raise IndexCorruptError(f"{path} holds an array of shape {table.shape}, not (3, chunks) int64")
        self.path = path
        self._keys, self._sorted, self._rows = table

    def __len__(self) -> int:
        return len(self._keys)

    def chunk_ids(self, rows: list[int]) -> list[str]:
        keys = self._keys[np.asarray(rows, dtype=np.int64)]
        return [f"{k >> INDEX_BITS}_{k & _INDEX_MASK}" for k in keys.tolist()]

    def all_chunk_ids(self) -> pa.Array:
        keys = pa.array(self._keys)
        page = pc.shift_right(keys, INDEX_BITS).cast(pa.string())
        index = pc.bit_wise_and(keys, _INDEX_MASK).cast(pa.string())
        return pc.binary_join_element_wise(page, index, "_")

    def rows(self, chunk_ids: list[str]) -> list[int | None]:
        """The FAISS row of each id (None: not a chunk of the index, or not an id)."""
        keys = [_key(chunk_id) for chunk_id in chunk_ids]
        wanted = np.array([-1 if k is None else k for k in keys], dtype=np.int64)
        if not len(self._sorted):
            return [None] * len(keys)
        at = np.minimum(np.searchsorted(self._sorted, wanted), len(self._sorted) - 1)
        found = self._sorted[at] == wanted
        return [int(r) if ok else None for r, ok in zip(self._rows[at].tolist(), found.tolist())]

    def n_chunks(self, page_id: int) -> int:
        """Chunks of a page (0: no such page)."""
        if not 0 <= page_id <= MAX_PAGE_ID:
            return 0
        first = page_id << INDEX_BITS
        lo = np.searchsorted(self._sorted, first, side="left")
        return int(np.searchsorted(self._sorted, first | _INDEX_MASK, side="right") - lo)


def _key(chunk_id: str) -> int | None:
    page, _, index = chunk_id.partition("_")
    if not (page.isascii() and page.isdigit() and index.isascii() and index.isdigit()):
        return None
    page_id, i = int(page), int(index)
    if str(page_id) != page or str(i) != index or page_id > MAX_PAGE_ID or i > _INDEX_MASK:
        return None
    return (page_id << INDEX_BITS) | i
