"""Indexes: embedders, vector shards, the Tantivy keyword and FAISS dense indexes, and their manifest.

Build with ``embed_corpus`` (vectors) and ``build_index`` (both indexes + manifest); open with
``WikiIndex.open``, which verifies fingerprints, files, the embedder and the chunk-id sets.
"""

from sws.index.build import build_index
from sws.index.corpus import CorpusFiles
from sws.index.dense import FaissIndexer, FaissSearcher
from sws.index.embed_job import embed_corpus
from sws.index.embedders import (
    Embedder,
    OpenAIEmbedder,
    Qwen3Embedder,
    SentenceTransformerEmbedder,
    make_embedder,
    register_embedder,
)
from sws.index.errors import (
    ChunkIdMismatchError,
    CorpusError,
    EmbedderMismatchError,
    EmbeddingError,
    EmptyCorpusError,
    FingerprintMismatchError,
    IndexBusyError,
    IndexCorruptError,
    IndexMissingError,
    SwsIndexError,
)
from sws.index.keyword import TantivyIndexer, TantivySearcher
from sws.index.manifest import verify_index
from sws.index.vectors import VectorSet
from sws.index.wiki_index import WikiIndex

__all__ = [
    "ChunkIdMismatchError",
    "CorpusError",
    "CorpusFiles",
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "EmptyCorpusError",
    "FaissIndexer",
    "FaissSearcher",
    "FingerprintMismatchError",
    "IndexBusyError",
    "IndexCorruptError",
    "IndexMissingError",
    "OpenAIEmbedder",
    "Qwen3Embedder",
    "SentenceTransformerEmbedder",
    "SwsIndexError",
    "TantivyIndexer",
    "TantivySearcher",
    "VectorSet",
    "WikiIndex",
    "build_index",
    "embed_corpus",
    "make_embedder",
    "register_embedder",
    "verify_index",
]
