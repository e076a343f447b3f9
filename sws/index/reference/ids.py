"""The reference's ``ids.pkl`` (FAISS row -> chunk id), read without running anything in it, and its checks.

The file is a pickle, which ``pickle.load`` would let run any callable it names. ``read_ids_pkl`` unpickles
with a ``find_class`` that resolves no global, so a pickled list or tuple of ``str`` (plain containers and
strings need none) is read and anything naming a callable is refused before it is called. A NumPy array of
``str`` needs numpy's own reconstruction functions: exactly those (``NUMPY_GLOBALS``) are resolved, to
objects of the installed numpy (never by importing the module the file names), and the result must be a
one-dimensional array of ``str``.
"""

from __future__ import annotations

import mmap
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sws.index.errors import IndexCorruptError

# "<page_id>_<i>": a decimal page id, the index without leading zeros
CHUNK_ID_PATTERN = r"^[0-9]+_(0|[1-9][0-9]*)$"
_core = getattr(np, "_core", None) or np.core
# (module, name) as numpy 1.x ("numpy.core") and 2.x ("numpy._core") pickle arrays -> the installed numpy's object
NUMPY_GLOBALS = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype}
for _package in ("numpy.core", "numpy._core"):
    NUMPY_GLOBALS[_package + ".multiarray", "_reconstruct"] = _core.multiarray._reconstruct
    NUMPY_GLOBALS[_package + ".numeric", "_frombuffer"] = _core.numeric._frombuffer


class IdsFileError(IndexCorruptError):
    """An ``ids.pkl`` is refused: unsafe, unreadable, not a sequence of chunk-id strings, or failing a check."""


# a truncated or damaged stream: a bad opcode or memo key, wrong argument types (numpy's included), deep nesting
_MALFORMED = (
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    LookupError,
    AttributeError,
    RecursionError,
    OverflowError,
)


class _RefusedGlobal(pickle.UnpicklingError):
    """A global or persistent id the file names: refused before anything is called."""


class _NoGlobalsUnpickler(pickle.Unpickler):
    """Resolves only ``NUMPY_GLOBALS``; any other global (a class, a function) is an error, so nothing runs."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in NUMPY_GLOBALS:
            return NUMPY_GLOBALS[module, name]
        raise _RefusedGlobal(f"it names the global {module}.{name}, which is never resolved")

    def persistent_load(self, pid: Any) -> Any:
        raise _RefusedGlobal("it holds a persistent id, which is never resolved")


def _describe(obj: Any) -> str:
    if isinstance(obj, np.ndarray):
        return f"a NumPy array of dtype {obj.dtype} and shape {obj.shape}"
    kind = type(obj)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return f"an object of type {name}"


def _as_strings(obj: Any, path: Path) -> list[str]:
    """``obj`` as a list of ``str``, or the error saying what it is instead."""
    if isinstance(obj, np.ndarray):
        if obj.ndim != 1 or obj.dtype.kind not in "UO":
            raise IdsFileError(f"{path} holds {_describe(obj)}: expected a list of chunk-id strings")
        obj = obj.tolist()
    elif not isinstance(obj, (list, tuple)):
        raise IdsFileError(f"{path} holds {_describe(obj)}: expected a list of chunk-id strings")
    for i, item in enumerate(obj):
        if type(item) is not str:
            raise IdsFileError(f"{path} holds a sequence whose item {i} is {_describe(item)}, not a str")
    return list(obj)


def read_ids_pkl(path: str | Path) -> list[str]:
    """The chunk ids of an ``ids.pkl``, in FAISS row order; nothing in the file is run.

    Raises:
        IdsFileError: the file is missing, truncated, not a pickle, names any other global than numpy's
            array reconstruction, or holds anything but a list/tuple (or 1-d NumPy array) of ``str``.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            if not os.fstat(f.fileno()).st_size:
                raise IdsFileError(f"{path} is empty")
            # a memory map: a length the stream claims never allocates past the file's end
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                obj = _NoGlobalsUnpickler(data).load()
                trailing = data.size() - data.tell()
    except FileNotFoundError:
        raise IdsFileError(f"chunk-id file missing: {path}") from None
    except _RefusedGlobal as exc:
        raise IdsFileError(f"{path} is refused: {exc}") from None
    except EOFError:
        raise IdsFileError(f"{path} is truncated (the pickle ends before its STOP opcode)") from None
    except _MALFORMED as exc:
        raise IdsFileError(f"{path} is not a readable pickle (damaged or truncated): {exc}") from None
    if trailing:
        raise IdsFileError(
            f"{path} has {trailing} bytes after the end of its pickle (damaged or not one pickle)"
        )
    return _as_strings(obj, path)


def check_chunk_ids(ids: list[str], path: str | Path, rows: int | None = None) -> dict[str, int]:
    """Check chunk ids as the reference needs them: ``<page_id>_<i>``, each once, each page's ``i``
    contiguous from 0 (it hydrates by position), and (``rows`` given) one per FAISS row.

    Returns:
        ``{"chunks", "pages"}``.

    Raises:
        IdsFileError naming ``path`` and the first offending id or page.
    """
    if rows is not None and len(ids) != rows:
        raise IdsFileError(f"{path} holds {len(ids)} chunk ids for {rows} rows")
    arr = pa.array(ids, pa.string())
    bad = pc.invert(pc.match_substring_regex(arr, CHUNK_ID_PATTERN))
    if pc.any(bad).as_py():
        first = pc.filter(arr, bad)[0].as_py()
        raise IdsFileError(f"{path} holds chunk id {first!r}, not of the form <page_id>_<i>")
    parts = pc.split_pattern(arr, "_")
    table = pa.table({"page": pc.list_element(parts, 0), "i": pc.list_element(parts, 1).cast(pa.int64())})
    pages = table.group_by("page").aggregate([("i", "count"), ("i", "count_distinct"), ("i", "max")])
    broken = pc.or_(
        pc.not_equal(pages["i_count"], pages["i_count_distinct"]),
        pc.not_equal(pages["i_count"], pc.add(pages["i_max"], 1)),
    )
    if pc.any(broken).as_py():
        page = pages.filter(broken).slice(0, 1).to_pylist()[0]
        raise IdsFileError(
            f"{path}: page {page['page']} has {page['i_count']} chunk ids ({page['i_count_distinct']} distinct, "
            f"highest index {page['i_max']}): each page's ids must be <page_id>_0 .. _<n-1>, each once"
        )
    return {"chunks": len(ids), "pages": pages.num_rows}
