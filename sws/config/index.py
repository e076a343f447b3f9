"""The retrieval build's sections: ``embedder``, ``embed`` (``sws build embed``) and ``index`` (``sws build index``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class EmbedderConfig:
    """Which embedder: ``kind`` is "sentence-transformers", "qwen3" or "openai" (or a registered plugin)."""

    kind: str = "sentence-transformers"
    model: str = "all-MiniLM-L6-v2"  # the packaged MiniLM (offline); Qwen/Qwen3-Embedding-0.6B in the paper
    query_task: str | None = None  # None: the model family's default (Qwen3's search instruction); "": none
    options: dict[str, Any] = field(
        default_factory=dict
    )  # constructor options: device, batch_size, max_length, runtime ("torch"|"onnx"|"auto", sentence-transformers),
    # max_batch_tokens (qwen3), base_url / dim / timeout_s / max_attempts (openai; key from SWS_EMBEDDING_API_KEY)


@dataclass
class EmbedJobConfig:
    """The corpus embedding job (``sws build embed``, ``ray_jobs/embed.py``)."""

    out: str = "sws-out/vectors"
    workers: int = 1  # actor-pool size; 0 embeds in the driver process without Ray
    num_cpus: float = 1.0  # per actor
    num_gpus: float = 0.0  # per actor: 1 on GPU clusters
    threads: int | None = None  # torch threads per CPU actor (None: num_cpus; 0: every core of its node)
    rows_per_unit: int = 4096  # chunk rows per work unit and vector shard
    dtype: str = "float16"  # stored vectors: float16 or float32


@dataclass
class KeywordIndexConfig:
    tokenizer: str = (
        "default"  # default | en_stem | default_ascii | en_stem_ascii (sws/index/keyword/analyzers.py)
    )
    threads: int = 0  # Tantivy writer threads (0: auto)
    heap_mb: int = 512  # writer memory, split over the threads
    max_query_terms: int = 1024  # distinct terms/phrases kept from one query


@dataclass
class DenseIndexConfig:
    m: int = 32  # HNSW degree
    ef_construction: int = 200
    ef_search: int = 128  # recall@10 >= 0.95 in benchmarks/search_hnsw_recall.py
    shard_rows: int = 0  # rows per HNSW shard (0: one shard)
    threads: int = 0  # OpenMP threads while building (0: FAISS default; 1: bit-for-bit repeatable)
    builder: str = "auto"  # cpu | gpu (CAGRA graph, faiss-gpu-cuvs) | auto (gpu when faiss can build there)


@dataclass
class IndexConfig:
    out: str = "sws-out/index"
    vectors: str | None = None  # a finished vectors directory to index (None: embed during the build)
    keyword: KeywordIndexConfig = field(default_factory=KeywordIndexConfig)
    dense: DenseIndexConfig = field(default_factory=DenseIndexConfig)
    verify_on_open: bool = False  # sws serve / eval: check every file's checksum first (sizes always)
