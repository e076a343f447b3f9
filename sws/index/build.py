"""``build_index``: corpus Parquet (+ vectors, embedded here or given) -> Tantivy + FAISS + manifest."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sws.index.corpus import CorpusFiles
from sws.index.dense import FaissIndexer
from sws.index.embed_job import embed_corpus
from sws.index.embedders import Embedder
from sws.index.errors import FingerprintMismatchError
from sws.index.files import CHECKSUM, file_checksum, file_sizes, write_json
from sws.index.keyword import TantivyIndexer
from sws.index.manifest import FAISS_DIR, FORMAT, MANIFEST, TANTIVY_DIR, VECTORS_DIR, index_fingerprint
from sws.index.vectors import VectorSet
from sws.manifest import versions

DONE = "build.json"  # per component: inputs + results; a re-run with the same inputs reuses the component


def _reuse(path: Path, inputs: dict[str, Any]) -> dict[str, Any] | None:
    done = path / DONE
    if done.is_file():
        record = json.loads(done.read_text())
        if record.get("inputs") == inputs:
            return record["result"]
    return None


def _component(path: Path, inputs: dict[str, Any], build: Any) -> dict[str, Any]:
    """Run ``build()`` unless ``path`` already holds a finished build of the same inputs."""
    result = _reuse(path, inputs)
    if result is None:
        (path / DONE).unlink(missing_ok=True)
        result = build()
        write_json(path / DONE, {"inputs": inputs, "result": result})
    return result


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
    vector units and components built from the same inputs are kept. ``manifest.json`` is written
    last, so an index directory without it is unfinished.

    Raises:
        ValueError: neither or both of ``embedder`` and ``vectors_dir``.
        CorpusError / EmptyCorpusError: bad corpus.
        FingerprintMismatchError: the vectors were made from another corpus or do not cover it.
    """
    if (embedder is None) == (vectors_dir is None):
        raise ValueError(
            "give either an embedder (to embed during the build) or vectors_dir, not both or neither"
        )
    keyword, dense = keyword or TantivyIndexer(), dense or FaissIndexer()
    started = time.perf_counter()
    corpus, out = CorpusFiles.open(corpus_dir), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)
    if vectors_dir is None:
        vectors = embed_corpus(corpus.root, out / VECTORS_DIR, embedder, **(embed_options or {}))
    else:
        vectors = VectorSet.open(vectors_dir)
    if vectors.corpus_fingerprint != corpus.fingerprint or vectors.rows != corpus.num_chunks:
        raise FingerprintMismatchError(
            f"vectors {vectors.path} ({vectors.rows} rows, corpus {vectors.corpus_fingerprint}) do not match "
            f"corpus {corpus.root} ({corpus.num_chunks} chunks, fingerprint {corpus.fingerprint})"
        )
    (out / TANTIVY_DIR).mkdir(exist_ok=True)
    (out / FAISS_DIR).mkdir(exist_ok=True)
    kw = _component(
        out / TANTIVY_DIR,
        {"corpus": corpus.fingerprint, "params": keyword.params()},
        lambda: keyword.build(corpus, out / TANTIVY_DIR),
    )
    dn = _component(
        out / FAISS_DIR,
        {"vectors": vectors.fingerprint, "params": dense.params()},
        lambda: dense.build(vectors, _chunk_ids(corpus), out / FAISS_DIR),
    )
    if kw["chunk_ids_sha256"] != dn["chunk_ids_sha256"]:
        raise FingerprintMismatchError(f"{out}: Tantivy and FAISS were built from different chunk lists")
    files = {
        f"{part}/{rel}": size
        for part in (TANTIVY_DIR, FAISS_DIR)
        for rel, size in file_sizes(out / part).items()
    }
    manifest = {
        "format": FORMAT,
        "fingerprint": index_fingerprint(
            corpus.fingerprint, vectors.embedder_fingerprint, keyword.params(), dense.params()
        ),
        "corpus": {"path": str(corpus.root), "fingerprint": corpus.fingerprint, "chunks": corpus.num_chunks},
        "embedder": {
            "spec": vectors.manifest["embedder"],
            "fingerprint": vectors.embedder_fingerprint,
            "dim": vectors.dim,
        },
        "vectors": {"path": str(vectors.path), "fingerprint": vectors.fingerprint},
        "keyword": {"params": keyword.params()} | kw,
        "dense": {"params": dense.params()} | dn,
        "files": files,
        "checksums": {"algorithm": CHECKSUM, "files": {rel: file_checksum(out / rel) for rel in files}},
        "versions": versions(),
        "seconds": round(time.perf_counter() - started, 3),
    }
    write_json(out / MANIFEST, manifest)
    return manifest


def _chunk_ids(corpus: CorpusFiles) -> list[str]:
    return [i for batch in corpus.iter_chunks(["chunk_id"], 65536) for i in batch.column(0).to_pylist()]
