"""``WikiIndex.open``: a built index directory, verified, with its keyword and dense searchers."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sws.index.dense import FaissSearcher
from sws.index.embedders import Embedder, make_embedder
from sws.index.errors import ChunkIdMismatchError, EmbedderMismatchError, IndexCorruptError
from sws.index.keyword import TantivySearcher
from sws.index.manifest import FAISS_DIR, TANTIVY_DIR, check_files, read_manifest
from sws.types import is_rust_panic


def check_embedder(embedder: Embedder, manifest: dict[str, Any], dim: int) -> None:
    """The query embedder must be the one the documents were embedded with.

    Raises:
        EmbedderMismatchError: different fingerprint or dimension.
    """
    if embedder.dim != dim:
        raise EmbedderMismatchError(
            f"embedder {embedder!r} has dimension {embedder.dim}, the FAISS index {dim}"
        )
    built = manifest["embedder"]
    if embedder.fingerprint != built["fingerprint"]:
        raise EmbedderMismatchError(
            f"embedder {embedder!r} is not the one the index was built with "
            f"({built['spec'].get('model')!r}, fingerprint {built['fingerprint']})"
        )


def check_chunk_ids(keyword: TantivySearcher, dense: FaissSearcher) -> None:
    """Tantivy and FAISS hold exactly the same chunk ids, each once.

    Raises:
        ChunkIdMismatchError: counts differ, an id is duplicated, or an id is in one index only.
    """
    counts = keyword.chunk_id_counts()
    duplicated = [chunk_id for chunk_id, n in counts[:3] if n > 1]
    if duplicated or keyword.num_chunks != len(counts):
        raise ChunkIdMismatchError(
            f"Tantivy index {keyword.path} holds duplicated chunk ids, e.g. {duplicated}"
        )
    text_ids = pa.array([chunk_id for chunk_id, _ in counts], pa.string())
    text_ids = text_ids.take(pc.sort_indices(text_ids))
    dense_ids = dense.all_chunk_ids()
    dense_sorted = dense_ids.take(pc.sort_indices(dense_ids)).combine_chunks()
    if len(text_ids) != len(dense_sorted) or not text_ids.equals(dense_sorted):
        only_text = pc.filter(text_ids, pc.invert(pc.is_in(text_ids, dense_sorted)))[:3].to_pylist()
        only_dense = pc.filter(dense_sorted, pc.invert(pc.is_in(dense_sorted, text_ids)))[:3].to_pylist()
        raise ChunkIdMismatchError(
            f"Tantivy ({len(text_ids)} chunks) and FAISS ({len(dense_sorted)} chunks) hold different chunk ids: "
            f"only in Tantivy e.g. {only_text}, only in FAISS e.g. {only_dense}"
        )


@dataclass
class WikiIndex:
    """An opened index directory. Build with ``WikiIndex.open(path)``.

    ``keyword`` and ``dense`` are the native searchers, or for an imported reference-layout index the
    reference backend's, which have their interface (``sws.index.reference``).

    ``embedder`` is the query embedder: the one given to ``open`` (checked against the manifest), or
    the build's embedder rebuilt from the manifest on first use, once however many threads ask at once
    (transformers swaps ``PreTrainedModel.tie_weights`` process-wide while it loads a model, so two loads at
    once can leave every later model of the process with untied weights).
    """

    path: Path
    manifest: dict[str, Any]
    keyword: TantivySearcher
    dense: FaissSearcher
    _embedder: Embedder | None = field(default=None, repr=False)
    _embedder_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        embedder: Embedder | None = None,
        ef_search: int | None = None,
        check_ids: bool = True,
        max_query_terms: int = 1024,
        verify: bool = False,
    ) -> WikiIndex:
        """Open and verify: manifest fingerprint, file sizes, readable indexes, embedder, same chunk-id set.
        An index in the reference's layout (``sws index import``; its manifest says ``"layout": "reference"``)
        opens with the reference backend (``sws.index.reference.backend``), its chunk ids checked on import.

        Args:
            embedder: query embedder (None: rebuilt from the manifest when first needed).
            ef_search: HNSW query-time candidate list size (None: the built value).
            check_ids: compare the full chunk-id sets (about a second per million chunks); counts are always compared.
            verify: also compare every file's checksum with the manifest (reads the whole index once).

        Raises:
            IndexMissingError, IndexCorruptError, FingerprintMismatchError, EmbedderMismatchError,
            ChunkIdMismatchError: each names the file or value at fault.
        """
        path = Path(path)
        manifest = read_manifest(path)
        check_files(path, manifest, verify=verify)
        reference = manifest.get("layout") == "reference"
        if reference:  # imported by `sws index import` (its ids were checked then)
            from sws.index.reference.backend import open_reference

            keyword, dense = open_reference(path, manifest, ef_search, max_query_terms)
        else:
            keyword = TantivySearcher(
                path / TANTIVY_DIR, manifest["keyword"]["params"]["tokenizer"], max_query_terms
            )
            dense = FaissSearcher(path / FAISS_DIR, manifest["dense"]["shards"], ef_search)
        if dense.dim != manifest["embedder"]["dim"]:
            raise EmbedderMismatchError(
                f"FAISS index under {path} has dimension {dense.dim}, the manifest's embedder {manifest['embedder']['dim']}"
            )
        try:
            if not keyword.num_chunks == dense.ntotal == manifest["corpus"]["chunks"]:
                raise ChunkIdMismatchError(
                    f"{path}: Tantivy holds {keyword.num_chunks} chunks, FAISS {dense.ntotal}, "
                    f"the corpus {manifest['corpus']['chunks']}"
                )
            if check_ids and not reference:
                check_chunk_ids(keyword, dense)
        except BaseException as exc:  # Tantivy raises ValueError for IO and format errors, or panics
            if not isinstance(exc, (ValueError, OSError)) and not is_rust_panic(exc):
                raise
            raise IndexCorruptError(
                f"cannot read Tantivy index {keyword.path}: {exc} (`sws index verify {path}` names the damaged file)"
            ) from exc
        if embedder is not None:
            check_embedder(embedder, manifest, dense.dim)
        return cls(path, manifest, keyword, dense, embedder)

    @property
    def fingerprint(self) -> str:
        return self.manifest["fingerprint"]

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                embedder = make_embedder(**self.manifest["embedder"]["spec"])
                check_embedder(embedder, self.manifest, self.dense.dim)
                self._embedder = embedder
        return self._embedder
