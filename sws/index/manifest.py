"""The index manifest: what an index directory was built from, and the checks run when it is opened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sws.index.errors import FingerprintMismatchError, IndexCorruptError, IndexMissingError
from sws.index.files import digest

FORMAT = "sws-index/1"
MANIFEST = "manifest.json"
TANTIVY_DIR, FAISS_DIR, VECTORS_DIR = "tantivy", "faiss", "vectors"


def index_fingerprint(
    corpus_fingerprint: str,
    embedder_fingerprint: str,
    keyword_params: dict[str, Any],
    dense_params: dict[str, Any],
) -> str:
    """Fingerprint of an index: the corpus, the embedding space and every parameter that changes the indexes."""
    return digest(
        {
            "corpus": corpus_fingerprint,
            "embedder": embedder_fingerprint,
            "keyword": keyword_params,
            "dense": dense_params,
        }
    )


def read_manifest(root: Path) -> dict[str, Any]:
    """Load ``manifest.json`` and check its fingerprint against its own recorded inputs.

    Raises:
        IndexMissingError: no manifest (not an index, or a build that did not finish).
        IndexCorruptError: unreadable or wrong format.
        FingerprintMismatchError: the recorded fingerprint does not match the recorded inputs.
    """
    path = root / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise IndexMissingError(
            f"no index at {root}: {MANIFEST} is missing (run `sws build index`)"
        ) from None
    except ValueError as exc:
        raise IndexCorruptError(f"unreadable {path}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexCorruptError(f"{path} is not an {FORMAT} manifest")
    try:
        expected = index_fingerprint(
            manifest["corpus"]["fingerprint"],
            manifest["embedder"]["fingerprint"],
            manifest["keyword"]["params"],
            manifest["dense"]["params"],
        )
        recorded = manifest["fingerprint"]
    except (KeyError, TypeError) as exc:
        raise IndexCorruptError(f"{path} lacks {exc}") from exc
    if recorded != expected:
        raise FingerprintMismatchError(
            f"{path}: fingerprint {recorded} does not match its corpus, embedder and parameters ({expected})"
        )
    return manifest


def check_files(root: Path, sizes: dict[str, int]) -> None:
    """Every file the build wrote is present with its size (catches truncation and swapped files).

    Raises:
        IndexMissingError / IndexCorruptError naming the first bad file.
    """
    for rel, size in sizes.items():
        path = root / rel
        if not path.is_file():
            raise IndexMissingError(f"index file missing: {path}")
        actual = path.stat().st_size
        if actual != size:
            raise IndexCorruptError(f"index file {path} has {actual} bytes, the manifest says {size}")
