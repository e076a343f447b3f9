"""BM25 searchers over the Tantivy indexes: chunks (one best chunk per page) and titles (a page's chunk 0)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sws.search.searcher import FETCH
from sws.types import Chunk, Hit

if TYPE_CHECKING:
    from sws.index.keyword import KeywordHit, TantivySearcher, TitleHit


def best_chunk_per_page(hits: list[KeywordHit], limit: int) -> list[KeywordHit]:
    """Keep each page's best chunk (hits are sorted by score, then row), in score order, at most ``limit``."""
    best: dict[int, KeywordHit] = {}
    for hit in hits:
        best.setdefault(hit.page_id, hit)
    return list(best.values())[:limit]


class KeywordSearcher:
    """BM25 over chunk text and titles: the best chunk of each of the top pages among ``FETCH * k`` chunks.

    Tantivy answers one query per call, so a batch is a loop over the queries.
    """

    source = "keywords"

    def __init__(self, index: TantivySearcher):
        self.index = index

    def search(self, query: str, k: int) -> list[Hit]:
        pages = best_chunk_per_page(self.index.search(query, FETCH * k), k) if k >= 1 else []
        chunks = self.index.chunks_of(pages)
        return [
            Hit(c, h.score, self.source, text_rank=rank) for rank, (h, c) in enumerate(zip(pages, chunks), 1)
        ]

    def batch_search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [self.search(query, k) for query in queries]


class TitleSearcher:
    """BM25 on titles alone: one hit per page, carrying its chunk 0 (the chunks of a batch looked up at once)."""

    source = "title"

    def __init__(self, index: TantivySearcher):
        self.index = index

    def search(self, query: str, k: int) -> list[Hit]:
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        titles = [self.index.search_titles(query, k) for query in queries]
        first = self.index.chunks_by_id([f"{t.page_id}_0" for found in titles for t in found])
        return [self._hits(found, first) for found in titles]

    def _hits(self, titles: list[TitleHit], first: dict[str, Chunk]) -> list[Hit]:
        """Ranks count every title, also one whose chunk 0 is missing (it is left out)."""
        hits = []
        for rank, title in enumerate(titles, 1):
            chunk = first.get(f"{title.page_id}_0")
            if chunk is not None:
                hits.append(Hit(chunk, title.score, self.source, text_rank=rank))
        return hits
