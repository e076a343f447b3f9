"""The index manifest: what an index directory was built from, and the checks run when it is opened."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sws.index.errors import FingerprintMismatchError, IndexCorruptError, IndexMissingError, SwsIndexError
from sws.index.files import CHECKSUM, file_checksum
from sws.manifest import digest, read_json_object

logger = logging.getLogger(__name__)

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
        manifest = read_json_object(path)
    except FileNotFoundError:
        raise IndexMissingError(
            f"no index at {root}: {MANIFEST} is missing (run `sws build index`)"
        ) from None
    except ValueError as exc:
        raise IndexCorruptError(f"unreadable {path}: {exc}") from exc
    if manifest.get("format") != FORMAT:
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


def recorded_checksums(manifest: dict[str, Any]) -> dict[str, str] | None:
    """The manifest's per-file checksums, or None for an index built before they were recorded.

    Raises:
        IndexCorruptError: they were made with another algorithm than ``CHECKSUM``.
    """
    checksums = manifest.get("checksums")
    if checksums is None:
        return None
    if checksums.get("algorithm") != CHECKSUM:
        raise IndexCorruptError(
            f"index checksums use {checksums.get('algorithm')!r}, this sws reads {CHECKSUM}"
        )
    return checksums["files"]


def file_problems(root: Path, manifest: dict[str, Any], *, checksums: bool) -> Iterator[SwsIndexError]:
    """Each damaged index file as an error naming it: missing, resized, or (with ``checksums``) changed.

    Every size is checked before any file is read; files without a recorded checksum are not read.
    """
    whole = []
    for rel, size in manifest["files"].items():
        path = root / rel
        if not path.is_file():
            yield IndexMissingError(f"index file missing: {path}")
        elif (actual := path.stat().st_size) != size:
            yield IndexCorruptError(f"index file {path} has {actual} bytes, the manifest says {size}")
        else:
            whole.append(rel)
    recorded = (recorded_checksums(manifest) if checksums else None) or {}
    for rel in whole:
        if rel in recorded and file_checksum(root / rel) != recorded[rel]:
            yield IndexCorruptError(
                f"index file {root / rel} is damaged: its {CHECKSUM} checksum differs from the manifest's"
            )


def check_files(root: Path, manifest: dict[str, Any], *, verify: bool = False) -> None:
    """Every file the build wrote is present with its size (catches truncation and swapped files) and, with
    ``verify``, its recorded checksum (catches damage that keeps the size; reads the whole index).

    Raises:
        IndexMissingError / IndexCorruptError naming the first bad file.
    """
    if verify and recorded_checksums(manifest) is None:
        logger.warning("%s records no checksums (built before sws recorded them): sizes checked only", root)
    for problem in file_problems(root, manifest, checksums=verify):
        raise problem


def verify_index(root: Path) -> dict[str, Any]:
    """Check every index file against the manifest: present, its size, and its checksum when recorded.

    Returns:
        ``{"index", "files", "bytes", "checksum"}``; ``checksum`` is None for an index built before
        checksums were recorded (then only the sizes were checked).

    Raises:
        IndexMissingError / IndexCorruptError naming every damaged file (and the manifest's own errors).
    """
    manifest = read_manifest(root)
    problems = list(file_problems(root, manifest, checksums=True))
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise IndexCorruptError(f"{len(problems)} damaged index files: " + "; ".join(map(str, problems)))
    return {
        "index": str(root),
        "files": len(manifest["files"]),
        "bytes": sum(manifest["files"].values()),
        "checksum": CHECKSUM if recorded_checksums(manifest) is not None else None,
    }
