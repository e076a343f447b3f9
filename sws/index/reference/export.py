"""``export_reference``: an sws index written in the reference's layout, for its own server to read.

Chunks are read from the sws Tantivy index in corpus row order (= FAISS row order); the vectors are the sws
FAISS shards' own fp16 codes, decoded and re-encoded (fp16 -> float32 -> fp16 is exact), so the exported
index holds exactly the vectors sws searches.
"""

from __future__ import annotations

import pickle
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tantivy

from sws.index.errors import IndexCorruptError
from sws.index.keyword.schema import CHUNKS_DIR as SWS_CHUNKS_DIR
from sws.index.manifest import TANTIVY_DIR as SWS_TANTIVY_DIR
from sws.index.reference.ids import check_chunk_ids
from sws.index.reference.layout import (
    CHUNKS_DIR,
    IDS_FILE,
    INDEX_FILE,
    METRICS,
    TITLES_DIR,
    builtin_tokenizer,
    chunks_schema,
    faiss_dir,
    titles_schema,
)
from sws.index.wiki_index import WikiIndex

_FIELDS = ("chunk_id", "page_id", "title", "chunk_index", "text")


def iter_chunk_rows(tantivy_dir: Path, rows: int, block: int = 4096) -> Iterator[dict[str, Any]]:
    """The stored chunks of an sws chunks index (``_FIELDS``), in corpus row order, ``block`` rows per query.

    Raises:
        IndexCorruptError: a row in ``0 .. rows - 1`` is missing or held twice.
    """
    index = tantivy.Index.open(str(tantivy_dir))
    searcher, schema = index.searcher(), index.schema
    for lo in range(0, rows, block):
        hi = min(lo + block, rows)
        q = tantivy.Query.range_query(schema, "row", tantivy.FieldType.Integer, lo, hi, include_upper=False)
        addrs = [addr for _, addr in searcher.search(q, hi - lo + 1, count=False).hits]
        found = sorted(zip(searcher.fast_field_values("row", addrs), addrs))
        if [row for row, _ in found] != list(range(lo, hi)):
            raise IndexCorruptError(
                f"Tantivy index {tantivy_dir} does not hold rows {lo}..{hi - 1} once each"
            )
        for _, addr in found:
            doc = searcher.doc(addr)
            yield {name: doc.get_first(name) for name in _FIELDS}


def _writer(path: Path, schema: tantivy.Schema, threads: int) -> tantivy.IndexWriter:
    path.mkdir(parents=True)
    heap = max(256, 64 * threads) * 1_000_000  # Tantivy needs at least 15 MB per writer thread
    return tantivy.Index(schema, path=str(path)).writer(heap_size=heap, num_threads=threads)


def _export_tantivy(wiki: WikiIndex, out: Path, tokenizer: str, threads: int) -> int:
    """Write the reference's ``chunks`` and ``titles`` indexes; returns the page count."""
    chunks = _writer(out / CHUNKS_DIR, chunks_schema(tokenizer), threads)
    titles = _writer(out / TITLES_DIR, titles_schema(tokenizer), threads)
    pages = 0
    for rec in iter_chunk_rows(wiki.path / SWS_TANTIVY_DIR / SWS_CHUNKS_DIR, wiki.keyword.num_chunks):
        doc_id = str(rec["page_id"])
        chunks.add_document(
            tantivy.Document(
                doc_id=doc_id, doc_title=rec["title"], text=rec["text"], chunk_id=rec["chunk_id"]
            )
        )
        if rec["chunk_index"] == 0:
            titles.add_document(tantivy.Document(doc_id=doc_id, doc_title=rec["title"]))
            pages += 1
    for writer in (chunks, titles):
        writer.commit()
        writer.wait_merging_threads()
    return pages


def _export_faiss(wiki: WikiIndex, out: Path, metric: str, ids: list[str], block: int = 65536) -> None:
    """``IndexHNSWSQ`` fp16 over the sws shards' vectors with the sws graph parameters, and ``ids.pkl``."""
    import faiss

    params = wiki.manifest["dense"]["params"]
    kind = {"ip": faiss.METRIC_INNER_PRODUCT, "l2": faiss.METRIC_L2}[metric]
    index = faiss.IndexHNSWSQ(wiki.dense.dim, faiss.ScalarQuantizer.QT_fp16, params["m"], kind)
    index.hnsw.efConstruction, index.hnsw.efSearch = params["ef_construction"], params["ef_search"]
    for _, shard in wiki.dense.shards:
        for lo in range(0, shard.ntotal, block):
            index.add(shard.reconstruct_n(lo, min(block, shard.ntotal - lo)))
    out.mkdir(parents=True)
    faiss.write_index(index, str(out / INDEX_FILE))
    with open(out / IDS_FILE, "wb") as f:
        pickle.dump(ids, f, protocol=4)  # a plain list of str: what the reference's pickle.load expects


def export_reference(
    index_dir: str | Path, out: str | Path, metric: str = "ip", *, model: str | None = None, threads: int = 0
) -> dict[str, Any]:
    """Write the sws index at ``index_dir`` in the reference's layout under ``out`` (``layout``).

    Written beside ``out`` (``.<name>.partial``) and renamed into place when complete, so ``out`` is whole
    or absent; a failed export removes its partial copy, and a rerun after a crash starts over.

    Args:
        metric: "ip" (inner product, as sws searches) or "l2" (same ranking on the normalised vectors).
        model: the embedder's name in the FAISS folder (default: the last part of the index's embedder model).
        threads: Tantivy writer and FAISS build threads (0: their defaults).

    Raises:
        ValueError: unknown metric, a tokenizer the reference cannot read, ``out`` not empty, an index that is
            in the reference's layout already.
        SwsIndexError: the sws index does not open and verify (``WikiIndex.open``); its chunk ids are not
            the reference's (``check_chunk_ids``).
    """
    if metric not in METRICS:
        raise ValueError(f"metric={metric!r}: expected one of {list(METRICS)}")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} exists and is not an empty directory: export into a new one")
    started = time.perf_counter()
    wiki = WikiIndex.open(index_dir)
    if wiki.manifest.get("layout") == "reference":
        raise ValueError(
            f"{wiki.path} is already in the reference's layout (imported from {wiki.manifest['corpus']['path']})"
        )
    tokenizer = builtin_tokenizer(wiki.manifest["keyword"]["params"]["tokenizer"])
    model = model or Path(wiki.manifest["embedder"]["spec"]["model"]).name
    vectors_dir = faiss_dir(model)
    ids = wiki.dense.all_chunk_ids().to_pylist()
    counts = check_chunk_ids(ids, wiki.path, rows=wiki.dense.ntotal)
    partial = out.with_name(f".{out.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    if threads:
        import faiss

        faiss.omp_set_num_threads(threads)
    try:
        pages = _export_tantivy(wiki, partial, tokenizer, threads)
        _export_faiss(wiki, partial / vectors_dir, metric, ids)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if out.exists():
        out.rmdir()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial.rename(out)
    return {
        "out": str(out),
        "index": str(wiki.path),
        "fingerprint": wiki.fingerprint,
        "chunks": counts["chunks"],
        "pages": pages,
        "faiss": str(vectors_dir),
        "dim": wiki.dense.dim,
        "metric": metric,
        "tokenizer": tokenizer,
        "seconds": round(time.perf_counter() - started, 3),
    }
