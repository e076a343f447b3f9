"""FAISS dense index: HNSW (fp16 SQ, inner product) shards in corpus row order + an Arrow chunk-id file."""

from sws.index.dense.indexer import FaissIndexer
from sws.index.dense.searcher import FaissSearcher

__all__ = ["FaissIndexer", "FaissSearcher"]
