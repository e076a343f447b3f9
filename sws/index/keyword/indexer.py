"""Build the chunks, titles and redirects Tantivy indexes from corpus Parquet."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path
from typing import Any

import tantivy

from sws.index.corpus import CorpusFiles
from sws.index.keyword.analyzers import TOKENIZERS, register
from sws.index.keyword.schema import (
    CHUNKS_DIR,
    REDIRECTS_DIR,
    TITLES_DIR,
    chunks_schema,
    fold,
    redirects_schema,
    titles_schema,
)

CHUNK_COLUMNS = ["chunk_id", "page_id", "title", "chunk_index", "n_chunks", "text"]


def _new_index(schema: tantivy.Schema, path: Path, tokenizer: str | None) -> tantivy.Index:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(path))
    if tokenizer:
        register(index, tokenizer)
    return index


class TantivyIndexer:
    """Writes ``chunks/``, ``titles/`` and ``redirects/`` with Tantivy's multi-threaded writer.

    Args:
        tokenizer: one of ``analyzers.TOKENIZERS`` (see there for the choice).
        threads: writer threads (0: Tantivy picks from the CPU count).
        heap_mb: writer memory, split over the threads (at least 15 MB per thread).
    """

    def __init__(self, tokenizer: str = "default", threads: int = 0, heap_mb: int = 512):
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown keyword tokenizer {tokenizer!r} (known: {', '.join(TOKENIZERS)})")
        if threads < 0 or heap_mb < 15 * max(threads, 1):
            raise ValueError(f"need threads >= 0 and heap_mb >= 15 per thread, got {threads=}, {heap_mb=}")
        self.tokenizer, self.threads, self.heap_mb = tokenizer, threads, heap_mb

    def params(self) -> dict[str, Any]:
        """What changes the index contents (part of the index fingerprint)."""
        return {"tokenizer": self.tokenizer}

    def build(self, corpus: CorpusFiles, out: str | Path) -> dict[str, Any]:
        """Write the three indexes under ``out``; returns counts, the chunk-id digest and timings."""
        out = Path(out)
        started = time.perf_counter()
        chunks = _new_index(chunks_schema(self.tokenizer), out / CHUNKS_DIR, self.tokenizer)
        titles = _new_index(titles_schema(self.tokenizer), out / TITLES_DIR, self.tokenizer)
        chunk_writer, title_writer = self._writer(chunks), self._writer(titles)
        digest, row, pages = hashlib.sha256(), 0, 0  # digest: as files.ids_digest, streamed
        for batch in corpus.iter_chunks(CHUNK_COLUMNS):
            for rec in batch.to_pylist():
                doc = tantivy.Document()
                doc.add_text("chunk_id", rec["chunk_id"])
                doc.add_integer("row", row)
                doc.add_integer("page_id", rec["page_id"])
                doc.add_text("title", rec["title"])
                doc.add_integer("chunk_index", rec["chunk_index"])
                doc.add_integer("n_chunks", rec["n_chunks"])
                doc.add_text("text", rec["text"])
                chunk_writer.add_document(doc)
                if rec["chunk_index"] == 0:
                    title_writer.add_document(self._title_doc(rec, row))
                    pages += 1
                digest.update(rec["chunk_id"].encode() + b"\n")
                row += 1
        chunks_s = time.perf_counter() - started
        for writer in (chunk_writer, title_writer):
            writer.commit()
            writer.wait_merging_threads()
        redirects = self._build_redirects(corpus, out / REDIRECTS_DIR)
        return {
            "chunks": row,
            "pages": pages,
            "redirects": redirects,
            "chunk_ids_sha256": digest.hexdigest(),
            "feed_s": round(chunks_s, 3),
            "seconds": round(time.perf_counter() - started, 3),
        }

    def _writer(self, index: tantivy.Index) -> tantivy.IndexWriter:
        return index.writer(heap_size=self.heap_mb * 1_000_000, num_threads=self.threads)

    @staticmethod
    def _title_doc(rec: dict[str, Any], row: int) -> tantivy.Document:
        doc = tantivy.Document()
        doc.add_integer("page_id", rec["page_id"])
        doc.add_integer("row", row)
        doc.add_integer("n_chunks", rec["n_chunks"])
        doc.add_text("title", rec["title"])
        doc.add_text("title_exact", rec["title"])
        doc.add_text("title_folded", fold(rec["title"]))
        return doc

    def _build_redirects(self, corpus: CorpusFiles, path: Path) -> int:
        index = _new_index(redirects_schema(), path, None)
        writer = index.writer(heap_size=max(self.heap_mb // 4, 15) * 1_000_000, num_threads=1)
        count = 0
        for batch in corpus.iter_redirects():
            for rec in batch.to_pylist():
                if rec["ns"] != 0 or not rec["title"] or not rec["target"]:
                    continue
                doc = tantivy.Document()
                doc.add_text("title_exact", rec["title"])
                doc.add_text("title_folded", fold(rec["title"]))
                doc.add_text("target", rec["target"])
                writer.add_document(doc)
                count += 1
        writer.commit()
        writer.wait_merging_threads()
        return count
