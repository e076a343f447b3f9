"""Checksums: which algorithm to verify, incremental hashing, and Wikimedia's ``*sums.txt`` files."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

# Strongest first. sha256 is what sws manifests use; Wikimedia publishes sha1 and md5.
ALGORITHMS = ("sha256", "sha1", "md5")


def choose_algorithm(digests: Mapping[str, str]) -> str:
    """The strongest algorithm among the expected ``digests`` (sha256 when none is expected)."""
    return next((a for a in ALGORITHMS if digests.get(a)), "sha256")


def new_hasher(algorithm: str):
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown checksum algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    return hashlib.new(algorithm)


def parse_sums(text: str) -> dict[str, str]:
    """``{file name: hex digest}`` from ``sha1sum``/``md5sum`` output (``<hex>  <name>``, ``*`` for binary)."""
    sums: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.strip().split(maxsplit=1)
        if len(parts) == 2 and all(c in "0123456789abcdefABCDEF" for c in parts[0]):
            sums[parts[1].lstrip("*").strip()] = parts[0].lower()
    return sums
