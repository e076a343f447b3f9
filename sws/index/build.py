"""``build_index``: corpus Parquet (+ vectors, embedded here or given) -> Tantivy + FAISS + manifest."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sws.index.corpus import CorpusFiles
from sws.index.dense import FaissIndexer
from sws.index.embed_job import embed_corpus
from sws.index.embedders import Embedder
from sws.index.errors import FingerprintMismatchError, IndexBusyError
from sws.index.files import CHECKSUM, file_checksum, file_sizes, write_json
from sws.index.keyword import TantivyIndexer
from sws.index.manifest import FAISS_DIR, FORMAT, MANIFEST, TANTIVY_DIR, VECTORS_DIR, index_fingerprint
from sws.index.vectors import VectorSet
from sws.manifest import refuse_other_artefact, versions

DONE = "build.json"  # per component: inputs + results; a re-run with the same inputs reuses the component
STAGING = ".staging"  # components built while the old ones are still in use, swapped in at the end


def _reuse(path: Path, inputs: dict[str, Any]) -> dict[str, Any] | None:
    done = path / DONE
    if done.is_file():
        record = json.loads(done.read_text())
        if record.get("inputs") == inputs:
            return record["result"]
    return None


def _component(out: Path, part: str, inputs: dict[str, Any], build: Any) -> tuple[Path, dict[str, Any]]:
    """Where ``part`` built from ``inputs`` is, and its result: ``out/part`` or its staged copy when either
    holds a finished build of them, else ``build(path)`` run afresh in the staged one."""
    staged = out / STAGING / part
    for path in (out / part, staged):
        if (result := _reuse(path, inputs)) is not None:
            return path, result
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    result = build(staged)
    write_json(staged / DONE, {"inputs": inputs, "result": result})
    return staged, result


def _swap_in(out: Path, parts: list[str]) -> None:
    """Move the staged ``parts`` into ``out`` and the ones they replace out of it. The old manifest goes
    first: a crash between the renames leaves an unfinished index (no manifest), which a rerun completes."""
    if not parts:
        return
    replaced = out / STAGING / "replaced"
    shutil.rmtree(replaced, ignore_errors=True)
    replaced.mkdir()
    (out / MANIFEST).unlink(missing_ok=True)
    for part in parts:
        if (out / part).exists():
            (out / part).rename(replaced / part)
        (out / STAGING / part).rename(out / part)


@contextmanager
def _only_builder(out: Path) -> Iterator[None]:
    """Hold an OS lock on the directory ``out`` (created if need be; the lock goes with the process)."""
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexBusyError(
                f"another process is building {out}; wait for it to end or use another output directory"
            ) from None
        yield
    finally:
        os.close(fd)


def build_index(
    corpus_dir: str | Path,
    out_dir: str | Path,
    *,
    embedder: Embedder | dict[str, Any] | None = None,
    vectors_dir: str | Path | None = None,
    keyword: TantivyIndexer | None = None,
    dense: FaissIndexer | None = None,
    embed_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the keyword and dense indexes of a corpus under ``out_dir`` and return the manifest.

    Vectors come from ``vectors_dir`` (a finished ``embed_corpus`` run; the embedder is the one
    recorded there) or are embedded into ``out_dir/vectors`` with ``embedder`` (or its ``spec()``)
    and ``embed_options`` (``embed_corpus`` keyword arguments). Each part is resumable: finished
    vector units and components built from the same inputs are kept. A component whose inputs
    changed is built under ``out_dir/.staging`` while the old index stays openable, and swapped in
    once all are done; ``manifest.json`` is written last, so an index directory without it is
    unfinished. A refused build changes nothing; one process builds a directory at a time.

    Raises:
        ValueError: neither or both of ``embedder`` and ``vectors_dir``.
        CorpusError / EmptyCorpusError: bad corpus.
        FingerprintMismatchError: the vectors were made from another corpus or do not cover it.
        IndexBusyError: another process is building ``out_dir``.
        OtherArtefactError: ``out_dir`` holds another artefact's manifest (a corpus, vectors).
    """
    if (embedder is None) == (vectors_dir is None):
        raise ValueError(
            "give either an embedder (to embed during the build) or vectors_dir, not both or neither"
        )
    keyword, dense = keyword or TantivyIndexer(), dense or FaissIndexer()
    started = time.perf_counter()
    corpus, out = CorpusFiles.open(corpus_dir), Path(out_dir)
    with _only_builder(out):
        refuse_other_artefact(out, FORMAT)
        if vectors_dir is None:
            vectors = embed_corpus(corpus.root, out / VECTORS_DIR, embedder, **(embed_options or {}))
        else:
            vectors = VectorSet.open(vectors_dir)
        if vectors.corpus_fingerprint != corpus.fingerprint or vectors.rows != corpus.num_chunks:
            raise FingerprintMismatchError(
                f"vectors {vectors.path} ({vectors.rows} rows, corpus {vectors.corpus_fingerprint}) do not "
                f"match corpus {corpus.root} ({corpus.num_chunks} chunks, fingerprint {corpus.fingerprint})"
            )
        kw_path, kw = _component(
            out,
            TANTIVY_DIR,
            {"corpus": corpus.fingerprint, "params": keyword.params()},
            lambda path: keyword.build(corpus, path),
        )
        dn_path, dn = _component(
            out,
            FAISS_DIR,
            {"vectors": vectors.fingerprint, "params": dense.params()},
            lambda path: dense.build(vectors, _chunk_ids(corpus), path),
        )
        if kw["chunk_ids_sha256"] != dn["chunk_ids_sha256"]:
            raise FingerprintMismatchError(f"{out}: Tantivy and FAISS were built from different chunk lists")
        paths = {TANTIVY_DIR: kw_path, FAISS_DIR: dn_path}
        files = {
            f"{part}/{rel}": (size, path / rel)
            for part, path in paths.items()
            for rel, size in file_sizes(path).items()
        }
        manifest = {
            "format": FORMAT,
            "fingerprint": index_fingerprint(
                corpus.fingerprint, vectors.embedder_fingerprint, keyword.params(), dense.params()
            ),
            "corpus": {
                "path": str(corpus.root),
                "fingerprint": corpus.fingerprint,
                "chunks": corpus.num_chunks,
            },
            "embedder": {
                "spec": vectors.manifest["embedder"],
                "fingerprint": vectors.embedder_fingerprint,
                "dim": vectors.dim,
            },
            "vectors": {"path": str(vectors.path), "fingerprint": vectors.fingerprint},
            "keyword": {"params": keyword.params()} | kw,
            "dense": {"params": dense.params()} | dn,
            "files": {rel: size for rel, (size, _) in files.items()},
            "checksums": {
                "algorithm": CHECKSUM,
                "files": {rel: file_checksum(path) for rel, (_, path) in files.items()},
            },
            "versions": versions(),
            "seconds": round(time.perf_counter() - started, 3),
        }
        _swap_in(out, [part for part, path in paths.items() if path != out / part])
        write_json(out / MANIFEST, manifest)
        shutil.rmtree(out / STAGING, ignore_errors=True)
    return manifest


def _chunk_ids(corpus: CorpusFiles) -> list[str]:
    return [i for batch in corpus.iter_chunks(["chunk_id"], 65536) for i in batch.column(0).to_pylist()]
