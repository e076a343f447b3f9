"""The search engine: keywords / vector / rrf / titles, and page lookups, over a ``WikiIndex``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sws.search.fusion import RRF_K, rrf_fuse
from sws.types import Chunk, Hit

if TYPE_CHECKING:  # imported lazily: sws.index loads Tantivy, which the tool layer's clients do not need
    from sws.index import WikiIndex
    from sws.index.keyword import KeywordHit

FETCH = 3  # candidate pools are FETCH * top_k (CONTRACT §1.4, §1.7, §1.8)
METHODS = ("rrf", "keywords", "vector")
MAX_REDIRECT_HOPS = 3
RANDOM_PAGE_DRAWS = 200  # the reference's retry budget for a random page (CONTRACT §2.6)


def best_chunk_per_page(hits: list[KeywordHit], limit: int) -> list[KeywordHit]:
    """Keep each page's best chunk (hits are sorted by score, then row), in score order, at most ``limit``."""
    best: dict[int, KeywordHit] = {}
    for hit in hits:
        best.setdefault(hit.chunk.page_id, hit)
    return list(best.values())[:limit]


class SearchEngine:
    """Implements ``sws.types.SearchBackend`` over an opened index.

    Args:
        index: the opened, verified index (its ``embedder`` embeds the queries).
    """

    def __init__(self, index: WikiIndex):
        self.index = index
        self._keyword, self._dense = index.keyword, index.dense

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> SearchEngine:
        """``WikiIndex.open(path, **kwargs)`` wrapped in an engine."""
        from sws.index import WikiIndex

        return cls(WikiIndex.open(path, **kwargs))

    def search(self, query: str, top_k: int, method: str) -> list[Hit]:
        """Top ``top_k`` hits by ``method``; odd query text never raises (an embedder failure does).

        Raises:
            ValueError: unknown method (the tool layer validates it first).
        """
        if method not in METHODS:
            raise ValueError(f"unknown search method {method!r} (known: {', '.join(METHODS)})")
        if top_k < 1:
            return []
        if method == "keywords":
            pages = best_chunk_per_page(self._keyword.search(query, FETCH * top_k), top_k)
            return [Hit(h.chunk, h.score, "keywords", text_rank=i) for i, h in enumerate(pages, 1)]
        if method == "vector":
            return self._vector(query, top_k)
        return self._rrf(query, top_k)

    def search_titles(self, query: str, top_k: int) -> list[Hit]:
        """Title search (BM25 on titles alone): one hit per page, carrying its chunk 0."""
        titles = self._keyword.search_titles(query, top_k)
        first = self._keyword.chunks_by_id([f"{t.page_id}_0" for t in titles])
        hits = [(t, first.get(f"{t.page_id}_0")) for t in titles]
        return [Hit(chunk, t.score, "title", text_rank=i) for i, (t, chunk) in enumerate(hits, 1) if chunk]

    def resolve_page(self, identifier: str) -> int | None:
        """Page id for a URL identifier: page id, exact title, redirect, case-insensitive title or
        redirect, then the best BM25 title (CONTRACT Part 1, 2)."""
        ident = identifier.strip()
        page_id = int(ident) if ident.isascii() and ident.isdigit() and len(ident) < 19 else None
        if page_id is not None and self._keyword.page_n_chunks(page_id) is not None:
            return page_id
        title = ident.replace("_", " ").strip()
        if not title:
            return None
        for folded in (False, True):
            page = self._keyword.page_by_title(title, folded=folded)
            if page is None:
                page = self._follow_redirect(title, folded)
            if page is not None:
                return page
        best = self._keyword.search_titles(title, 1)
        return best[0].page_id if best else None

    def page_chunks(self, page_id: int) -> list[Chunk]:
        return self._keyword.page_chunks(page_id)

    def random_page(self, rng: random.Random) -> int | None:
        """A page drawn uniformly by ``rng`` (the same seed, the same page), None for an empty index.

        A chunk drawn uniformly keeps its page with probability 1 / (the page's chunk count), which makes
        every page equally likely; after ``RANDOM_PAGE_DRAWS`` rejections the last page drawn is kept.
        """
        chunk = None
        for _ in range(RANDOM_PAGE_DRAWS):
            chunk = self._keyword.chunk_at_row(rng.randrange(self._keyword.num_chunks or 1))
            if chunk is None or rng.random() * chunk.n_chunks < 1:
                break
        return chunk.page_id if chunk else None

    def _follow_redirect(self, title: str, folded: bool) -> int | None:
        for _ in range(MAX_REDIRECT_HOPS):
            target = self._keyword.redirect_target(title, folded=folded)
            if target is None:
                return None
            for target_folded in (False, True):
                page = self._keyword.page_by_title(target, folded=target_folded)
                if page is not None:
                    return page
            title, folded = target, False
        return None

    def _vector_candidates(self, query: str, k: int) -> list[tuple[str, float]]:
        found = self._dense.search(self.index.embedder.embed_queries([query])[0], k)
        return list(zip(self._dense.chunk_ids([row for row, _ in found]), (score for _, score in found)))

    def _vector(self, query: str, top_k: int) -> list[Hit]:
        candidates = self._vector_candidates(query, FETCH * top_k)
        chunks = self._hydrate([chunk_id for chunk_id, _ in candidates], {}, top_k)
        return [
            Hit(chunks[chunk_id], score, "vector", vector_rank=rank)
            for rank, (chunk_id, score) in enumerate(candidates, 1)
            if chunk_id in chunks
        ]

    def _rrf(self, query: str, top_k: int) -> list[Hit]:
        pool = FETCH * top_k
        text = best_chunk_per_page(self._keyword.search(query, FETCH * pool), pool)
        vector = self._vector_candidates(query, pool)
        fused = rrf_fuse([h.chunk.chunk_id for h in text], [chunk_id for chunk_id, _ in vector], RRF_K)[:pool]
        chunks = self._hydrate([f.chunk_id for f in fused], {h.chunk.chunk_id: h.chunk for h in text}, top_k)
        return [
            Hit(chunks[f.chunk_id], f.score, f.source, text_rank=f.text_rank, vector_rank=f.vector_rank)
            for f in fused
            if f.chunk_id in chunks
        ]

    def _hydrate(self, chunk_ids: list[str], known: dict[str, Chunk], limit: int) -> dict[str, Chunk]:
        """The first ``limit`` of ``chunk_ids`` (in order) that exist, looking up only as many as needed:
        ids that fail (unknown to the keyword index) are skipped and the next ones tried (CONTRACT §1.8)."""
        found: dict[str, Chunk] = {}
        start = 0
        while len(found) < limit and start < len(chunk_ids):
            batch = chunk_ids[start : start + limit - len(found)]
            start += len(batch)
            known |= self._keyword.chunks_by_id([chunk_id for chunk_id in batch if chunk_id not in known])
            found |= {chunk_id: known[chunk_id] for chunk_id in batch if chunk_id in known}
        return found
