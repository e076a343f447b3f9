"""Read side of the Tantivy indexes: BM25 chunk and title search, chunk/page/title lookups."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import tantivy

from sws.index.errors import IndexCorruptError, IndexMissingError
from sws.index.keyword.analyzers import make_analyzer, register
from sws.index.keyword.query import build_query, word_leaves
from sws.index.keyword.schema import (
    CHUNK_FIELD_BOOSTS,
    CHUNKS_DIR,
    REDIRECTS_DIR,
    TITLE_FIELD_BOOSTS,
    TITLES_DIR,
    fold,
)
from sws.types import Chunk, is_rust_panic

_FIELDS = {
    CHUNKS_DIR: ("chunk_id", "row", "page_id", "title", "chunk_index", "n_chunks", "text"),
    TITLES_DIR: ("page_id", "row", "n_chunks", "title", "title_exact", "title_folded"),
    REDIRECTS_DIR: ("title_exact", "title_folded", "target"),
}


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """A raw BM25 chunk hit, read from fast fields alone: ``row`` is the corpus row (ties are broken by it),
    ``page_id`` its page; its stored chunk is read by :meth:`TantivySearcher.chunks_of` (only for the hits
    kept: a stored document costs more to read than the search that found it)."""

    score: float
    row: int
    page_id: int
    address: tantivy.DocAddress


@dataclass(frozen=True, slots=True)
class TitleHit:
    score: float
    row: int
    page_id: int


def open_tantivy(
    path: Path, tokenizer: str | None, fields: tuple[str, ...] = ()
) -> tuple[tantivy.Schema, tantivy.Searcher]:
    """The schema and a searcher of the Tantivy index at ``path`` (``tokenizer``: registered first).

    Raises:
        IndexMissingError: no ``meta.json``.
        IndexCorruptError: unreadable, or it lacks one of ``fields`` (default: the sws fields of its kind).
    """
    meta = path / "meta.json"
    if not meta.is_file():
        raise IndexMissingError(f"Tantivy index missing: {meta} not found")
    try:
        names = {field["name"] for field in json.loads(meta.read_text())["schema"]}
        index = tantivy.Index.open(str(path))
        if tokenizer:
            register(index, tokenizer)
        searcher = index.searcher()
    except BaseException as exc:
        if not isinstance(exc, (ValueError, KeyError, TypeError)) and not is_rust_panic(exc):
            raise
        raise IndexCorruptError(f"cannot open Tantivy index {path}: {exc!r}") from exc
    missing = sorted(set(fields or _FIELDS[path.name]) - names)
    if missing:
        raise IndexCorruptError(f"Tantivy index {path} lacks fields {missing}")
    return index.schema, searcher


def _chunk(doc: tantivy.Document) -> Chunk:
    return Chunk(
        chunk_id=doc.get_first("chunk_id"),
        page_id=doc.get_first("page_id"),
        title=doc.get_first("title"),
        chunk_index=doc.get_first("chunk_index"),
        n_chunks=doc.get_first("n_chunks"),
        text=doc.get_first("text"),
    )


class TantivySearcher:
    """The chunks, titles and redirects indexes under one directory, opened read-only.

    Args:
        path: directory holding ``chunks/``, ``titles/`` and ``redirects/``.
        tokenizer: the tokenizer the indexes were built with (recorded in the index manifest).
        max_query_terms: distinct terms/phrases kept from one query (the rest is ignored).
    """

    def __init__(self, path: str | Path, tokenizer: str, max_query_terms: int = 1024):
        path = Path(path)
        self.path, self.tokenizer, self.max_query_terms = path, tokenizer, max_query_terms
        self._leaf_of = word_leaves(make_analyzer(tokenizer))
        self._chunk_schema, self._chunks = open_tantivy(path / CHUNKS_DIR, tokenizer)
        self._title_schema, self._titles = open_tantivy(path / TITLES_DIR, tokenizer)
        self._redirect_schema, self._redirects = open_tantivy(path / REDIRECTS_DIR, None)

    @property
    def num_chunks(self) -> int:
        return self._chunks.num_docs

    @property
    def num_pages(self) -> int:
        return self._titles.num_docs

    def search(self, query: str, limit: int) -> list[KeywordHit]:
        """Top ``limit`` chunks by BM25 over text (boost 1) and title (boost 2); ties by corpus row."""
        q = build_query(self._chunk_schema, self._leaf_of, query, CHUNK_FIELD_BOOSTS, self.max_query_terms)
        if q is None or limit < 1:
            return []
        hits = self._chunks.search(q, limit, count=False).hits
        addrs = [addr for _, addr in hits]
        rows = self._chunks.fast_field_values("row", addrs)
        pages = self._chunks.fast_field_values("page_id", addrs)
        return sorted(
            (KeywordHit(score, row, page, addr) for (score, addr), row, page in zip(hits, rows, pages)),
            key=lambda h: (-h.score, h.row),
        )

    def chunks_of(self, hits: list[KeywordHit]) -> list[Chunk]:
        """The stored chunks of ``hits`` (of this searcher's :meth:`search`), in order."""
        return [_chunk(self._chunks.doc(hit.address)) for hit in hits]

    def search_titles(self, query: str, limit: int) -> list[TitleHit]:
        """Top ``limit`` pages by BM25 over the title alone; ties by corpus row."""
        q = build_query(self._title_schema, self._leaf_of, query, TITLE_FIELD_BOOSTS, self.max_query_terms)
        if q is None or limit < 1:
            return []
        hits = self._titles.search(q, limit, count=False).hits
        addrs = [addr for _, addr in hits]
        rows = self._titles.fast_field_values("row", addrs)
        pages = self._titles.fast_field_values("page_id", addrs)
        return sorted(
            (TitleHit(score, row, page) for (score, _), row, page in zip(hits, rows, pages)),
            key=lambda h: (-h.score, h.row),
        )

    def chunks_by_id(self, chunk_ids: list[str]) -> dict[str, Chunk]:
        """The stored chunks among ``chunk_ids`` (unknown ids are absent)."""
        wanted = sorted(set(chunk_ids))
        if not wanted:
            return {}
        q = tantivy.Query.term_set_query(self._chunk_schema, "chunk_id", wanted)
        hits = self._chunks.search(q, len(wanted), count=False).hits
        return {c.chunk_id: c for c in (_chunk(self._chunks.doc(addr)) for _, addr in hits)}

    def chunk_at_row(self, row: int) -> Chunk | None:
        """The chunk at global corpus row ``row`` (0 .. num_chunks - 1), None outside."""
        q = tantivy.Query.term_query(self._chunk_schema, "row", row)
        hits = self._chunks.search(q, 1, count=False).hits
        return _chunk(self._chunks.doc(hits[0][1])) if hits else None

    def page_n_chunks(self, page_id: int) -> int | None:
        """Number of chunks of a page, None when the page does not exist."""
        hits = self._titles.search(self._page_query(self._title_schema, page_id), 1, count=False).hits
        return self._titles.doc(hits[0][1]).get_first("n_chunks") if hits else None

    def page_chunks(self, page_id: int) -> list[Chunk]:
        """All chunks of a page in chunk order (empty if the page does not exist)."""
        n_chunks = self.page_n_chunks(page_id)
        if not n_chunks:
            return []
        hits = self._chunks.search(self._page_query(self._chunk_schema, page_id), n_chunks, count=False).hits
        return sorted((_chunk(self._chunks.doc(addr)) for _, addr in hits), key=lambda c: c.chunk_index)

    def page_by_title(self, title: str, *, folded: bool = False) -> int | None:
        """Page id of an exact (or, with ``folded``, case-insensitive) title; the lowest corpus row wins."""
        field, value = ("title_folded", fold(title)) if folded else ("title_exact", title)
        hits = self._titles.search(
            tantivy.Query.term_query(self._title_schema, field, value), 16, count=False
        ).hits
        if not hits:
            return None
        addrs = [addr for _, addr in hits]
        rows = self._titles.fast_field_values("row", addrs)
        pages = self._titles.fast_field_values("page_id", addrs)
        return min(zip(rows, pages))[1]

    def redirect_target(self, title: str, *, folded: bool = False) -> str | None:
        """Target title of a redirect page (exact or case-insensitive title)."""
        field, value = ("title_folded", fold(title)) if folded else ("title_exact", title)
        q = tantivy.Query.term_query(self._redirect_schema, field, value)
        hits = self._redirects.search(q, 1, count=False).hits
        return self._redirects.doc(hits[0][1]).get_first("target") if hits else None

    def chunk_id_counts(self) -> list[tuple[str, int]]:
        """Every indexed chunk id with its document count, from the term dictionary."""
        return self._chunks.terms_with_prefix("chunk_id", "")

    @staticmethod
    def _page_query(schema: tantivy.Schema, page_id: int) -> tantivy.Query:
        return tantivy.Query.term_query(schema, "page_id", page_id)
