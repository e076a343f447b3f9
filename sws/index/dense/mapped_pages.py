"""The pages of a memory-mapped index file that opening it left in this process's resident set, given back.

FAISS validates an HNSW graph when it reads one (faiss 1.15: every neighbour id), so a memory-mapped index opens
with its whole graph resident in the opening process: 11.7 % of the paper's released file (2.95 GB at 10.8M
chunks) in every replica before its first search. :func:`release_mapped_pages` unmaps those pages from this
process (``madvise(MADV_DONTNEED)`` over the file's read-only shared mappings): they stay in the page cache,
shared by the node's replicas, and a search maps back only the ones it reads. Linux only; elsewhere nothing
is done.
"""

from __future__ import annotations

import ctypes
import mmap
import re
from pathlib import Path

_MAPS = Path("/proc/self/maps")
_LINE = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s+(.*)$")


def read_only_mappings(path: Path) -> list[tuple[int, int]]:
    """(start, end) addresses of this process's read-only shared mappings of ``path`` (none off Linux)."""
    if not _MAPS.is_file():
        return []
    target = str(path.resolve())
    spans = []
    for line in _MAPS.read_text().splitlines():
        match = _LINE.match(line)
        if match and match[4] == target and match[3][1] == "-" and match[3][3] == "s":
            spans.append((int(match[1], 16), int(match[2], 16)))
    return spans


def release_mapped_pages(path: Path) -> int:
    """Unmap from this process the resident pages of its read-only shared mappings of ``path`` (a read-only
    shared mapping holds the file's own pages, so nothing is lost: a later read maps them again); the bytes of
    address space advised.

    Raises:
        OSError: ``madvise`` refused (the errno named).
    """
    spans = read_only_mappings(path)
    if not spans:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for start, end in spans:
        if libc.madvise(start, end - start, mmap.MADV_DONTNEED) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"madvise(MADV_DONTNEED) over {path}'s mapping failed")
    return sum(end - start for start, end in spans)
