"""Searchers of one shape (keywords, vector, rrf, titles) and the engine over them: page and chunk lookup."""

from sws.search.dense import DenseSearcher
from sws.search.engine import SearchEngine
from sws.search.fusion import RRF_K, Fused, rrf_fuse
from sws.search.hybrid import HybridSearcher
from sws.search.keyword import KeywordSearcher, TitleSearcher, best_chunk_per_page
from sws.search.searcher import FETCH, EmbeddingSearcher, Searcher

__all__ = [
    "FETCH",
    "RRF_K",
    "DenseSearcher",
    "EmbeddingSearcher",
    "Fused",
    "HybridSearcher",
    "KeywordSearcher",
    "SearchEngine",
    "Searcher",
    "TitleSearcher",
    "best_chunk_per_page",
    "rrf_fuse",
]
