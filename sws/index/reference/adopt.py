"""``import_reference``: an index in the reference's layout adopted as an sws index, its large files in place.

It is read from one folder in the whole layout, or from its Tantivy and FAISS parts given apart, as folders
(``sources``) or as the paper's two ``.tar.zst`` archives (``archive``: extracted, streamed and resumable,
into the index's partial folder, where its files are then adopted as they lie).

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sws.index.dense.searcher import read_faiss_index
from sws.index.embedders import Embedder
from sws.index.embedders.base import QWEN3_QUERY_TASK, space_fingerprint
from sws.index.errors import ChunkIdMismatchError, IndexCorruptError, IndexMissingError
from sws.index.files import CHECKSUM, file_checksum, file_sizes, write_json
from sws.index.keyword.searcher import open_tantivy
from sws.index.manifest import FORMAT, MANIFEST, index_fingerprint
from sws.index.reference.archive import PROGRESS, extract_archives
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
from sws.index.reference.sources import TANTIVY, ReferenceParts, folder_parts, reference_parts
from sws.manifest import digest, versions

LAYOUT = "reference"
REFERENCE_EMBEDDER = {"kind": "qwen3", "model": "Qwen/Qwen3-Embedding-0.6B", "query_task": QWEN3_QUERY_TASK}


def _tokenizer(tantivy: Path) -> tuple[str, dict[str, dict[str, str | None]]]:
    """The sws analyzer of the text fields, and every field's tokenizer per index (``meta.json``)."""
    fields = {part.name: tantivy_tokenizers(tantivy / part.name) for part in (CHUNKS_DIR, TITLES_DIR)}
    text = {
        fields["chunks"].get("text"),
        fields["chunks"].get("doc_title"),
        fields["titles"].get("doc_title"),
    }
    if len(text) != 1:
        raise IndexCorruptError(f"{tantivy}: text and doc_title are tokenized differently ({fields})")
    return sws_tokenizer(text.pop(), f"{tantivy / CHUNKS_DIR.name}"), fields


def _embedder(embedder: Embedder | dict[str, Any] | None, dim: int) -> dict[str, Any]:
    """The manifest's ``embedder``: the spec, its space's fingerprint, the FAISS dimension."""
    if isinstance(embedder, Embedder):
        if embedder.dim != dim:
            raise ValueError(f"embedder {embedder!r} has dimension {embedder.dim}, the FAISS index {dim}")
        return {"spec": embedder.spec(), "fingerprint": embedder.fingerprint, "dim": dim}
    spec = dict(embedder or REFERENCE_EMBEDDER)
    fingerprint = space_fingerprint(spec["model"], dim, spec.get("query_task"))
    return {"spec": spec, "fingerprint": fingerprint, "dim": dim}


def _adopt(files: dict[str, Path], dst: Path, copy: bool) -> None:
    """Hard-link (``copy``: copy) each file of ``files`` (its path in the index -> where it is) into ``dst``;
    those already there (extracted from an archive, or an import in place) stay as they are."""
    for rel, path in files.items():
        if path == dst / rel:
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        if copy:
            shutil.copy2(path, dst / rel)
            continue
        try:
            os.link(path, dst / rel)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
            raise ValueError(
                f"cannot hard-link {path} into {dst} ({exc.strerror}): put --out on the same filesystem "
                "as the source, or pass --copy to copy the files"
            ) from None


def partial_dir(out: str | Path) -> Path:
    """Where ``import_reference`` writes the index ``out`` before renaming it into place (``.<name>.partial``
    beside it); an archive import's extracted members stay there until it succeeds."""
    out = Path(out).resolve()
    return out.with_name(f".{out.name}.partial")


def _sources(src: str | Path | Sequence[str | Path]) -> list[Path]:
    """The one or two sources, resolved.

    Raises:
        ValueError: none, more than two, the same one twice; IndexMissingError: one does not exist.
    """
    sources = [Path(s).resolve() for s in ([src] if isinstance(src, (str, Path)) else src)]
    if not 1 <= len(sources) <= 2:
        raise ValueError(
            f"{len(sources)} sources: give the folder in the reference's layout, or its Tantivy and FAISS parts "
            "(two folders or two .tar.zst archives)"
        )
    if len(set(sources)) < len(sources):
        raise ValueError(f"{sources[0]} is given twice: give its Tantivy and its FAISS part")
    for source in sources:
        if not source.exists():
            raise IndexMissingError(f"{source} does not exist")
    return sources


def _parts(sources: list[Path], dst: Path) -> ReferenceParts:
    """The Tantivy and the FAISS part among ``sources``: folders as they are, archives extracted into
    ``dst`` (``extract_archives``)."""
    found = {str(s): folder_parts(s) for s in sources if s.is_dir()}
    archives = [s for s in sources if not s.is_dir()]
    if archives:
        taken = {kind: label for label, parts in found.items() for kind in parts}
        held = extract_archives(archives, dst, taken)
        extracted = folder_parts(dst, label=held.get(TANTIVY))
        found |= {str(archive): {} for archive in archives}
        for kind, label in held.items():
            if kind in extracted:  # else: not whole (a FAISS folder without ids.pkl)
                found[label][kind] = extracted[kind]
    return reference_parts(found)


def import_reference(
    src: str | Path | Sequence[str | Path],
    out: str | Path,
    *,
    embedder: Embedder | dict[str, Any] | None = None,
    copy: bool = False,
) -> dict[str, Any]:
    """Adopt the index in the reference's layout at ``src`` as the sws index ``out``; returns the manifest.

    ``src`` is one folder in the whole layout, or its two parts given apart, each a folder or the paper's
    ``.tar.zst`` archive of it (``sources``: where each part is looked for). An archive is extracted, streamed,
    into ``out``'s partial folder (``partial_dir``), whose files are then adopted where they lie; an
    interrupted or failed archive import keeps the members extracted whole there, and a rerun resumes
    (``archive``).

    Everything is checked before the index is written: the Tantivy schemas and tokenizers, the FAISS type
    (the HNSW family) and metric, ``ids.pkl`` (read without running anything in it) with as many ids as FAISS
    rows and Tantivy chunk documents, each ``<page_id>_<i>`` with each page's ``i`` contiguous from 0. The
    index is written beside ``out`` and renamed into place, so ``out`` is whole or absent; ``out`` may also be
    the one folder ``src`` itself (then only the keys and the manifest are added to it).

    Args:
        embedder: the query embedder (an ``Embedder`` or its ``make_embedder`` spec); by default the
            reference's, ``REFERENCE_EMBEDDER``.
        copy: copy the files instead of hard-linking them (``src`` and ``out`` on different filesystems).

    Raises:
        IndexMissingError, IndexCorruptError (``IdsFileError`` for ``ids.pkl``), ChunkIdMismatchError:
            the source is not a readable index in the reference's layout, each naming the file at fault
            (``ArchiveError``: a damaged or unsafe archive, naming the member).
        ValueError: ``out`` is not new or empty; a hard link is impossible; a wrong embedder dimension; a part
            held by both sources.
    """
    started = time.perf_counter()
    sources, out = _sources(src), Path(out).resolve()
    in_place = sources == [out]
    if not in_place and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} exists and is not an empty directory: import into a new one")
    dst = out if in_place else partial_dir(out)
    extracting = any(not s.is_dir() for s in sources)
    if not (in_place or extracting):
        shutil.rmtree(dst, ignore_errors=True)
    keep_keys = in_place and (dst / MANIFEST).exists()  # an earlier import's, which a failed one leaves
    try:
        parts = _parts(sources, dst)
        files = {
            f"{rel}/{name}": folder / name
            for rel, folder in parts.folders().items()
            for name in file_sizes(folder)
        }
        faiss_rel = Path("faiss") / parts.faiss.name
        tokenizer, fields = _tokenizer(parts.tantivy)
        chunks_dir, titles_dir = (parts.tantivy / part.name for part in (CHUNKS_DIR, TITLES_DIR))
        chunk_docs = open_tantivy(chunks_dir, None, CHUNK_FIELDS)[1].num_docs
        title_docs = open_tantivy(titles_dir, None, TITLE_FIELDS)[1].num_docs
        index = read_faiss_index(parts.faiss / INDEX_FILE)
        dense = hnsw_params(index, parts.faiss / INDEX_FILE)
        ids_path = parts.faiss / IDS_FILE
        ids = read_ids_pkl(ids_path)
        counts = check_chunk_ids(ids, ids_path, rows=index.ntotal)
        if counts["chunks"] != chunk_docs:
            raise ChunkIdMismatchError(
                f"{ids_path} holds {counts['chunks']} chunk ids, {chunks_dir} {chunk_docs} chunk documents"
            )
        keys = keys_of(ids, ids_path)
        del ids, index
        spec = _embedder(embedder, dense["dim"])
        rels = list(files)
        _adopt(files, dst, copy)
        write_keys(dst / KEYS_FILE, keys)
        checksums = {rel: file_checksum(dst / rel) for rel in [*rels, KEYS_FILE]}
        content = digest({rel: checksums[rel] for rel in rels})
        keyword = {"tokenizer": tokenizer, "layout": LAYOUT, "fields": fields}
        manifest = {
            "format": FORMAT,
            "layout": LAYOUT,
            "fingerprint": index_fingerprint(content, spec["fingerprint"], keyword, dense),
            "corpus": {
                "path": " + ".join(map(str, sources)),
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
        if in_place and not keep_keys:
            (dst / KEYS_FILE).unlink(missing_ok=True)
        elif not (in_place or extracting):
            shutil.rmtree(dst, ignore_errors=True)
        raise
    (dst / PROGRESS).unlink(missing_ok=True)
    if not in_place:
        if out.exists():
            out.rmdir()
        out.parent.mkdir(parents=True, exist_ok=True)
        dst.rename(out)
    return manifest
