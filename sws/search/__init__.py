"""The search engine: keywords / vector / rrf / only_title, page and chunk lookup."""

from sws.search.engine import METHODS, SearchEngine, best_chunk_per_page
from sws.search.fusion import RRF_K, Fused, rrf_fuse

__all__ = [
    "METHODS",
    "RRF_K",
    "Fused",
    "SearchEngine",
    "best_chunk_per_page",
    "rrf_fuse",
]
