"""``import_reference``: a folder in the reference's layout adopted as an sws index, its large files in place.

The files are hard-linked into the index (or, asked for, copied; never silently), and beside them go the chunk
keys (``keys.py``, from ``ids.pkl``) and a ``sws-index/1`` manifest marked ``"layout": "reference"``: file
sizes and checksums, counts, the FAISS type, metric, M, efSearch and dimension read from the file, the Tantivy
tokenizers read from ``meta.json``, the content's fingerprint and the query embedder (by default the
reference's: Qwen3-Embedding-0.6B with its search instruction, CONTRACT §1.7). ``WikiIndex.open`` then opens
it with the reference backend (``open_reference``).
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path
from typing import Any

from sws.index.dense.searcher import read_faiss_index
from sws.index.embedders import Embedder
from sws.index.embedders.base import QWEN3_QUERY_TASK, space_fingerprint
from sws.index.errors import ChunkIdMismatchError, IndexCorruptError, IndexMissingError
from sws.index.files import CHECKSUM, file_checksum, file_sizes, write_json
from sws.index.keyword.searcher import open_tantivy
from sws.index.manifest import FORMAT, MANIFEST, index_fingerprint
from sws.index.reference.dense import hnsw_params
from sws.index.reference.ids import check_chunk_ids, read_ids_pkl
from sws.index.reference.keys import KEYS_FILE, keys_of, write_keys
from sws.index.reference.keyword import CHUNK_FIELDS, TITLE_FIELDS
from sws.index.reference.layout import (
    CHUNKS_DIR,
    IDS_FILE,
    INDEX_FILE,
    TITLES_DIR,
    sws_tokenizer,
    tantivy_tokenizers,
)
from sws.manifest import digest, versions

LAYOUT = "reference"
REFERENCE_EMBEDDER = {"kind": "qwen3", "model": "Qwen/Qwen3-Embedding-0.6B", "query_task": QWEN3_QUERY_TASK}


def find_faiss_dir(src: Path) -> Path:
    """The one ``faiss/<name>/`` under ``src`` holding ``index.faiss`` and ``ids.pkl``, relative to ``src``.

    Raises:
        IndexMissingError: none, or ``src`` lacks the Tantivy indexes; ValueError: several.
    """
    for part in (CHUNKS_DIR, TITLES_DIR):
        if not (src / part).is_dir():
            raise IndexMissingError(f"{src} is not in the reference's layout: {part}/ is missing")
    found = sorted(p.parent for p in src.glob(f"faiss/*/{INDEX_FILE}") if (p.parent / IDS_FILE).is_file())
    if not found:
        raise IndexMissingError(
            f"{src} is not in the reference's layout: no faiss/*/{{{INDEX_FILE},{IDS_FILE}}}"
        )
    if len(found) > 1:
        raise ValueError(
            f"{src} holds {len(found)} FAISS folders ({', '.join(p.name for p in found)}): keep one"
        )
    return found[0].relative_to(src)


def _tokenizer(src: Path) -> tuple[str, dict[str, dict[str, str | None]]]:
    """The sws analyzer of the text fields, and every field's tokenizer per index (``meta.json``)."""
    fields = {part.name: tantivy_tokenizers(src / part) for part in (CHUNKS_DIR, TITLES_DIR)}
    text = {
        fields["chunks"].get("text"),
        fields["chunks"].get("doc_title"),
        fields["titles"].get("doc_title"),
    }
    if len(text) != 1:
        raise IndexCorruptError(f"{src}: text and doc_title are tokenized differently ({fields})")
    return sws_tokenizer(text.pop(), f"{src / CHUNKS_DIR}"), fields


def _embedder(embedder: Embedder | dict[str, Any] | None, dim: int) -> dict[str, Any]:
    """The manifest's ``embedder``: the spec, its space's fingerprint, the FAISS dimension."""
    if isinstance(embedder, Embedder):
        if embedder.dim != dim:
            raise ValueError(f"embedder {embedder!r} has dimension {embedder.dim}, the FAISS index {dim}")
        return {"spec": embedder.spec(), "fingerprint": embedder.fingerprint, "dim": dim}
    spec = dict(embedder or REFERENCE_EMBEDDER)
    fingerprint = space_fingerprint(spec["model"], dim, spec.get("query_task"))
    return {"spec": spec, "fingerprint": fingerprint, "dim": dim}


def _adopt(src: Path, dst: Path, rels: list[str], copy: bool) -> None:
    """Hard-link (``copy``: copy) each file of ``rels`` from ``src`` to ``dst``."""
    for rel in rels:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        if copy:
            shutil.copy2(src / rel, dst / rel)
            continue
        try:
            os.link(src / rel, dst / rel)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
            raise ValueError(
                f"cannot hard-link {src / rel} into {dst} ({exc.strerror}): put --out on the same filesystem "
                "as the source, or pass --copy to copy the files"
            ) from None


def import_reference(
    src: str | Path,
    out: str | Path,
    *,
    embedder: Embedder | dict[str, Any] | None = None,
    copy: bool = False,
) -> dict[str, Any]:
    """Adopt the folder ``src`` in the reference's layout as the sws index ``out``; returns the manifest.

    Everything is checked before anything is written: the Tantivy schemas and tokenizers, the FAISS type
    (the HNSW family) and metric, ``ids.pkl`` (read without running anything in it) with as many ids as FAISS
    rows and Tantivy chunk documents, each ``<page_id>_<i>`` with each page's ``i`` contiguous from 0. The
    index is written beside ``out`` and renamed into place, so ``out`` is whole or absent; ``out`` may also be
    ``src`` itself (then only the keys and the manifest are added to it).

    Args:
        embedder: the query embedder (an ``Embedder`` or its ``make_embedder`` spec); by default the
            reference's, ``REFERENCE_EMBEDDER``.
        copy: copy the files instead of hard-linking them (``src`` and ``out`` on different filesystems).

    Raises:
        IndexMissingError, IndexCorruptError (``IdsFileError`` for ``ids.pkl``), ChunkIdMismatchError:
            the source is not a readable index in the reference's layout, each naming the file at fault.
        ValueError: ``out`` is not new or empty; a hard link is impossible; a wrong embedder dimension.
    """
    started = time.perf_counter()
    src, out = Path(src).resolve(), Path(out).resolve()
    in_place = out == src
    if not in_place and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} exists and is not an empty directory: import into a new one")
    faiss_rel = find_faiss_dir(src)
    tokenizer, fields = _tokenizer(src)
    chunk_docs = open_tantivy(src / CHUNKS_DIR, None, CHUNK_FIELDS)[1].num_docs
    title_docs = open_tantivy(src / TITLES_DIR, None, TITLE_FIELDS)[1].num_docs
    index = read_faiss_index(src / faiss_rel / INDEX_FILE)
    dense = hnsw_params(index, src / faiss_rel / INDEX_FILE)
    ids_path = src / faiss_rel / IDS_FILE
    ids = read_ids_pkl(ids_path)
    counts = check_chunk_ids(ids, ids_path, rows=index.ntotal)
    if counts["chunks"] != chunk_docs:
        raise ChunkIdMismatchError(
            f"{ids_path} holds {counts['chunks']} chunk ids, {src / CHUNKS_DIR} {chunk_docs} chunk documents"
        )
    keys = keys_of(ids, ids_path)
    del ids, index
    spec = _embedder(embedder, dense["dim"])
    rels = [f"{part}/{rel}" for part in (CHUNKS_DIR, TITLES_DIR, faiss_rel) for rel in file_sizes(src / part)]
    dst = out if in_place else out.with_name(f".{out.name}.partial")
    keep_keys = in_place and (dst / MANIFEST).exists()  # an earlier import's, which a failed one leaves
    if not in_place:
        shutil.rmtree(dst, ignore_errors=True)
    try:
        if not in_place:
            _adopt(src, dst, rels, copy)
        write_keys(dst / KEYS_FILE, keys)
        checksums = {rel: file_checksum(dst / rel) for rel in [*rels, KEYS_FILE]}
        content = digest({rel: checksums[rel] for rel in rels})
        keyword = {"tokenizer": tokenizer, "layout": LAYOUT, "fields": fields}
        manifest = {
            "format": FORMAT,
            "layout": LAYOUT,
            "fingerprint": index_fingerprint(content, spec["fingerprint"], keyword, dense),
            "corpus": {
                "path": str(src),
                "fingerprint": content,
                "chunks": counts["chunks"],
                "pages": counts["pages"],
            },
            "embedder": spec,
            "keyword": {"params": keyword, "chunks": chunk_docs, "pages": title_docs, "redirects": 0},
            "dense": {
                "params": dense,
                "dir": str(faiss_rel),
                "shards": [{"file": INDEX_FILE, "start": 0, "rows": counts["chunks"]}],
            },
            "files": {rel: (dst / rel).stat().st_size for rel in checksums},
            "checksums": {"algorithm": CHECKSUM, "files": checksums},
            "versions": versions(),
            "seconds": round(time.perf_counter() - started, 3),
        }
        write_json(dst / MANIFEST, manifest)
    except BaseException:
        if not in_place:
            shutil.rmtree(dst, ignore_errors=True)
        elif not keep_keys:
            (dst / KEYS_FILE).unlink(missing_ok=True)
        raise
    if not in_place:
        if out.exists():
            out.rmdir()
        out.parent.mkdir(parents=True, exist_ok=True)
        dst.rename(out)
    return manifest
