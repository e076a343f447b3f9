"""The search engine: keywords / vector / rrf / only_title, page and chunk lookup."""

from sws.search.engine import METHODS, SearchEngine, best_chunk_per_page
from sws.search.fusion import RRF_K, Fused, rrf_fuse
from sws.search.types import Chunk, Hit, SearchBackend

__all__ = [
    "METHODS",
    "RRF_K",
    "Chunk",
    "Fused",
    "Hit",
    "SearchBackend",
    "SearchEngine",
    "best_chunk_per_page",
    "rrf_fuse",
]
