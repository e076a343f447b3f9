"""Small file helpers shared by the index writers: atomic writes, JSON, digests, file sizes and checksums."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from sws.io import write_atomically, write_text_atomically

CHECKSUM = "xxh3_128"  # per-file checksum recorded in the index manifest (~10 GB/s: disk-bound)
_BLOCK = 1 << 22


def ids_digest(ids: Iterable[str]) -> str:
    """sha256 of the chunk ids in order, one per line: two indexes hold the same ids in the same order iff equal."""
    h = hashlib.sha256()
    for chunk_id in ids:
        h.update(chunk_id.encode() + b"\n")
    return h.hexdigest()


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file + rename), so a reader never sees half a file."""
    write_text_atomically(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_npy(path: Path, array: np.ndarray) -> None:
    """Write a ``.npy`` file atomically."""

    def save(tmp: Path) -> None:
        with open(tmp, "wb") as f:  # a file object: np.save would add ".npy" to a path
            np.save(f, array)

    write_atomically(path, save)


def file_sizes(root: Path) -> dict[str, int]:
    """Size of every file under ``root`` by relative path (lock files excluded)."""
    return {
        str(p.relative_to(root)): p.stat().st_size
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def file_checksum(path: Path) -> str:
    """The ``CHECKSUM`` hex digest of a file, read in 4 MiB blocks (never whole into memory)."""
    h = xxhash.xxh3_128()
    buffer = bytearray(_BLOCK)
    view = memoryview(buffer)
    with open(path, "rb") as f:
        while n := f.readinto(buffer):
            h.update(view[:n])
    return h.hexdigest()
