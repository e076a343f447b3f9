"""The reference's Tantivy ``chunks`` and ``titles`` indexes read through ``TantivySearcher``'s interface.

Keyword search is the reference's (CONTRACT §1.4: text boost 1, ``doc_title`` boost 2, BM25) with sws's
deliberate deviations, as over a native index (CONTRACT Part 1, 2): the query is built by
``sws.index.keyword.build_query`` (plain words and quoted phrases honoured, every other query-syntax character
plain text), so it never fails and the reference's phrase fallback for a failed parse is never needed; ties
rank by FAISS row, as a native index's do by corpus row. A page's chunks are a ``doc_id`` lookup sorted by
chunk index; chunk counts, rows and the random page come from the chunk keys (``keys.py``).

The archive holds no redirects table: a title resolves by exact title, then case-insensitive title, through
the titles index (the candidates of a phrase query on ``doc_title`` compared with the title), and then, in
``SearchEngine.resolve_page``, to the best BM25 title, as the reference resolves every title.
"""

from __future__ import annotations

from pathlib import Path

import tantivy

from sws.index.keyword.analyzers import make_analyzer
from sws.index.keyword.query import build_query, word_leaves
from sws.index.keyword.schema import fold
from sws.index.keyword.searcher import KeywordHit, TitleHit, open_tantivy
from sws.index.reference.keys import ChunkKeys
from sws.index.reference.layout import CHUNKS_DIR, TANTIVY_DIR, TITLES_DIR, tantivy_tokenizers
from sws.types import Chunk

CHUNK_FIELDS, TITLE_FIELDS = ("doc_id", "doc_title", "text", "chunk_id"), ("doc_id", "doc_title")
CHUNK_BOOSTS, TITLE_BOOSTS = {"text": 1.0, "doc_title": 2.0}, {"doc_title": 1.0}
EXACT_TITLE_CANDIDATES = 64  # titles containing a title as a phrase, best BM25 first, compared with it


def _page_id(doc: tantivy.Document) -> int | None:
    doc_id = doc.get_first("doc_id")
    return int(doc_id) if isinstance(doc_id, str) and doc_id.isascii() and doc_id.isdigit() else None


class ReferenceTantivySearcher:
    """The reference's ``tantivy/chunk-1536/{chunks,titles}`` under ``root``, opened read-only.

    Args:
        root: the folder in the reference's layout.
        tokenizer: the sws analyzer equal to the indexes' built-in one (``layout.sws_tokenizer``).
        keys: the chunk keys of the FAISS rows.
        max_query_terms: distinct terms/phrases kept from one query (the rest is ignored).
    """

    def __init__(self, root: str | Path, tokenizer: str, keys: ChunkKeys, max_query_terms: int = 1024):
        root = Path(root)
        self.path, self.tokenizer, self.max_query_terms = root / TANTIVY_DIR, tokenizer, max_query_terms
        self._leaf_of = word_leaves(make_analyzer(tokenizer))
        self._chunk_schema, self._chunks = open_tantivy(root / CHUNKS_DIR, None, CHUNK_FIELDS)
        self._title_schema, self._titles = open_tantivy(root / TITLES_DIR, None, TITLE_FIELDS)
        self._by_chunk_id = tantivy_tokenizers(root / CHUNKS_DIR)["chunk_id"] is not None  # indexed
        self._keys = keys

    @property
    def num_chunks(self) -> int:
        return self._chunks.num_docs

    @property
    def num_pages(self) -> int:
        return self._titles.num_docs

    def search(self, query: str, limit: int) -> list[KeywordHit]:
        """Top ``limit`` chunks by BM25 over text (boost 1) and title (boost 2); ties by FAISS row. A chunk
        whose id is not a FAISS row's is left out (``sws index import`` checks the counts agree)."""
        q = build_query(self._chunk_schema, self._leaf_of, query, CHUNK_BOOSTS, self.max_query_terms)
        if q is None or limit < 1:
            return []
        hits = self._chunks.search(q, limit, count=False).hits
        ids = [self._chunks.doc(addr).get_first("chunk_id") for _, addr in hits]
        found = zip(hits, ids, self._keys.rows(ids))
        return sorted(
            (KeywordHit(s, row, int(cid.split("_")[0]), a) for (s, a), cid, row in found if row is not None),
            key=lambda h: (-h.score, h.row),
        )

    def chunks_of(self, hits: list[KeywordHit]) -> list[Chunk]:
        """The stored chunks of ``hits`` (of this searcher's :meth:`search`), in order."""
        return [self._chunk(self._chunks.doc(hit.address)) for hit in hits]

    def search_titles(self, query: str, limit: int) -> list[TitleHit]:
        """Top ``limit`` pages by BM25 over the title alone; ties by the FAISS row of their chunk 0."""
        q = build_query(self._title_schema, self._leaf_of, query, TITLE_BOOSTS, self.max_query_terms)
        if q is None or limit < 1:
            return []
        hits = [
            (s, _page_id(self._titles.doc(a))) for s, a in self._titles.search(q, limit, count=False).hits
        ]
        rows = self._first_rows([page for _, page in hits])
        return sorted(
            (TitleHit(s, row, page) for (s, page), row in zip(hits, rows) if row is not None),
            key=lambda h: (-h.score, h.row),
        )

    def chunks_by_id(self, chunk_ids: list[str]) -> dict[str, Chunk]:
        """The stored chunks among ``chunk_ids`` (unknown ids are absent): by ``chunk_id`` where it is indexed,
        else (the reference never queries it) among their pages' chunks."""
        wanted = {cid for cid, row in zip(chunk_ids, self._keys.rows(chunk_ids)) if row is not None}
        if not wanted:
            return {}
        if self._by_chunk_id:
            q, limit = (
                tantivy.Query.term_set_query(self._chunk_schema, "chunk_id", sorted(wanted)),
                len(wanted),
            )
        else:
            pages = sorted({cid.split("_")[0] for cid in wanted})
            q = tantivy.Query.term_set_query(self._chunk_schema, "doc_id", pages)
            limit = sum(self._keys.n_chunks(int(page)) for page in pages)
        docs = (self._chunks.doc(a) for _, a in self._chunks.search(q, limit, count=False).hits)
        return {
            c.chunk_id: c for c in map(self._chunk, (d for d in docs if d.get_first("chunk_id") in wanted))
        }

    def chunk_at_row(self, row: int) -> Chunk | None:
        """The chunk of FAISS row ``row`` (0 .. num_chunks - 1), None outside."""
        if not 0 <= row < len(self._keys):
            return None
        chunk_id = self._keys.chunk_ids([row])[0]
        return self.chunks_by_id([chunk_id]).get(chunk_id)

    def page_n_chunks(self, page_id: int) -> int | None:
        """Number of chunks of a page, None when the page has none."""
        return self._keys.n_chunks(page_id) or None

    def page_chunks(self, page_id: int) -> list[Chunk]:
        """All chunks of a page in chunk order (empty if the page does not exist)."""
        n_chunks = self._keys.n_chunks(page_id)
        if not n_chunks:
            return []
        q = tantivy.Query.term_query(self._chunk_schema, "doc_id", str(page_id))
        hits = self._chunks.search(q, n_chunks, count=False).hits
        return sorted((self._chunk(self._chunks.doc(a)) for _, a in hits), key=lambda c: c.chunk_index)

    def page_by_title(self, title: str, *, folded: bool = False) -> int | None:
        """Page id of an exact (or, with ``folded``, case-insensitive) title among the
        ``EXACT_TITLE_CANDIDATES`` titles that best match it as a phrase; the lowest FAISS row wins."""
        leaf = self._leaf_of(title)
        if not leaf:
            return None
        if len(leaf) == 1:
            q = tantivy.Query.term_query(self._title_schema, "doc_title", leaf[0][1])
        else:
            q = tantivy.Query.phrase_query(self._title_schema, "doc_title", list(leaf))
        same = fold if folded else str
        pages = [
            _page_id(doc)
            for doc in (self._titles.doc(a) for _, a in self._titles.search(q, EXACT_TITLE_CANDIDATES).hits)
            if same(doc.get_first("doc_title") or "") == same(title)
        ]
        found = [(row, page) for row, page in zip(self._first_rows(pages), pages) if row is not None]
        return min(found)[1] if found else None

    def redirect_target(self, title: str, *, folded: bool = False) -> str | None:
        """Always None: the reference's archives hold no redirects table."""
        return None

    def _first_rows(self, pages: list[int | None]) -> list[int | None]:
        """The FAISS row of each page's chunk 0 (None: no such page)."""
        return self._keys.rows([f"{page}_0" if page is not None else "" for page in pages])

    def _chunk(self, doc: tantivy.Document) -> Chunk:
        chunk_id = doc.get_first("chunk_id")
        page, _, index = chunk_id.rpartition("_")
        return Chunk(
            chunk_id=chunk_id,
            page_id=int(page),
            title=doc.get_first("doc_title"),
            chunk_index=int(index),
            n_chunks=self._keys.n_chunks(int(page)),
            text=doc.get_first("text"),
        )
