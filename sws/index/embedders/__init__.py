"""Embedders behind one interface: Qwen3-Embedding, sentence-transformers, OpenAI-compatible endpoints
(and the hashing embedder of the scale benchmarks)."""

from sws.index.embedders.base import QWEN3_QUERY_TASK, Embedder, default_query_task, format_query
from sws.index.embedders.hashing import HashingEmbedder
from sws.index.embedders.openai_api import OpenAIEmbedder
from sws.index.embedders.qwen3 import RUNTIMES as QWEN3_RUNTIMES
from sws.index.embedders.qwen3 import Qwen3Embedder, last_token_pool
from sws.index.embedders.registry import embedder_kinds, make_embedder, register_embedder
from sws.index.embedders.st import MINILM, SentenceTransformerEmbedder, packaged_minilm_dir
from sws.index.embedders.st import RUNTIMES as ST_RUNTIMES

# the embedders with query runtimes ("torch" is each one's default, the fp32 reference on the CPU)
QUERY_RUNTIMES = {"sentence-transformers": ST_RUNTIMES, "qwen3": QWEN3_RUNTIMES}

__all__ = [
    "MINILM",
    "QUERY_RUNTIMES",
    "QWEN3_QUERY_TASK",
    "Embedder",
    "HashingEmbedder",
    "OpenAIEmbedder",
    "Qwen3Embedder",
    "SentenceTransformerEmbedder",
    "default_query_task",
    "embedder_kinds",
    "format_query",
    "last_token_pool",
    "make_embedder",
    "packaged_minilm_dir",
    "register_embedder",
]
