"""The stages of ``benchmarks/scale_index.py``, each run in a fresh child process (not a benchmark itself).

Each stage's wall time and memory peaks are recorded by ``stage_memory.stage`` (its docstring says how they
are read). Tantivy memory-maps its segments while merging them, so RSS counts file pages the kernel drops
under pressure; ``RssAnon`` is what the stage itself holds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from index_common import load_leads, load_queries, percentiles, synthetic_corpus
from stage_memory import memory, stage

from sws.config import DenseIndexConfig, EmbedJobConfig, IndexConfig
from sws.index import WikiIndex
from sws.index.embedders.hashing import HashingEmbedder
from sws.stages import embed_options, make_indexers

TOP_K = 10


def in_child(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a fresh spawned process (its own interpreter, page tables and peak RSS)."""
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def drop_page_cache() -> bool:
    """``sync; echo 3 > /proc/sys/vm/drop_caches`` (root only); False where it is not allowed."""
    import os

    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3")
    except OSError:
        return False
    return True


def probed(name: str, fn: Callable[..., Any], record: dict[str, dict]) -> Callable[..., Any]:
    """``fn`` (a production build step, e.g. ``TantivyIndexer.build``) with its stage recorded."""

    def run(*args: Any, **kwargs: Any) -> Any:
        with stage(name, record):
            return fn(*args, **kwargs)

    return run


def make_corpus(root: Path, n_chunks: int, n_leads: int | None, chunk_bytes: int) -> dict[str, Any]:
    """Child: the synthetic corpus (``index_common.synthetic_corpus``), written part by part."""
    record: dict[str, dict] = {}
    with stage("corpus", record):
        synthetic_corpus(root, load_leads(n_leads), n_chunks, chunk_bytes)
    return record


def build(corpus: Path, out: Path, shards: int, dim: int) -> dict[str, Any]:
    """Child: embed with the hashing embedder, then the production ``build_index`` (Tantivy + ``shards``
    FAISS HNSW shards from the index config), each step's time and peak RSS recorded."""
    from sws.index import CorpusFiles, build_index, embed_corpus

    rows = CorpusFiles.open(corpus).num_chunks
    embedder = HashingEmbedder(dim=dim)
    keyword, dense = make_indexers(IndexConfig(dense=DenseIndexConfig(shard_rows=math.ceil(rows / shards))))
    options = embed_options(EmbedJobConfig(workers=0))  # in this process, 4096-row units
    record: dict[str, dict] = {}
    with stage("embed", record):
        embed_corpus(corpus, out / "vectors", embedder, **options)
    keyword.build = probed("tantivy", keyword.build, record)
    dense.build = probed("faiss", dense.build, record)
    with stage("build_index", record):
        manifest = build_index(
            corpus, out, embedder=embedder, keyword=keyword, dense=dense, embed_options=options
        )
    return {"stages": record, "manifest": manifest}


def open_index(path: Path, dim: int) -> dict[str, Any]:
    """Child: ``WikiIndex.open`` (all checks, chunk-id sets included) and the replica's memory after it."""
    started = time.perf_counter()
    WikiIndex.open(path, embedder=HashingEmbedder(dim=dim))
    return {"seconds": round(time.perf_counter() - started, 3), **memory()}


def queries(n: int) -> dict[str, list[str]]:
    """``keyword``: short AOL queries; ``question``: natural questions (HotpotQA, MuSiQue, Bamboogle)."""
    sets = load_queries()
    return {"keyword": sets["aol"][:n], "question": sets["questions"][:n]}


def open_urls(ids: pa.ChunkedArray, n: int) -> list[str]:
    """``n`` URLs of the chunks ``ids`` spread over the whole corpus (every fifth one a whole article)."""
    rows = np.linspace(0, len(ids) - 1, n).astype(int)
    urls = []
    for i, chunk_id in enumerate(ids.take(rows).to_pylist()):
        page, chunk = chunk_id.rsplit("_", 1)
        urls.append(
            f"https://en.wikipedia.org/wiki/{page}" + ("" if i % 5 == 4 else f"#chunk-{int(chunk) + 1}")
        )
    return urls


def latency(path: Path, dim: int, n_queries: int) -> dict[str, Any]:
    """Child: p50/p99 per method and query set in process (FAISS on 1 thread, like a replica), each set run
    once untimed first (the index was just read cold by the open step), empty results per method, and
    recall@10 of the sharded HNSW against exact search over the stored vectors."""
    import faiss

    from sws.env import OpenUrlArgs, open_page
    from sws.search import SearchEngine

    faiss.omp_set_num_threads(1)
    engine = SearchEngine(WikiIndex.open(path, embedder=HashingEmbedder(dim=dim)))
    methods: dict[str, Callable[[str], list]] = {
        m: (lambda q, m=m: engine.search(q, TOP_K, m)) for m in ("keywords", "vector", "rrf")
    }
    methods["only_title"] = lambda q: engine.search_titles(q, TOP_K)
    # BM25 top-1 costs what top-30 costs when no dynamic pruning (block-max WAND) runs: see keyword_growth
    methods["keywords_top1"] = lambda q: engine.index.keyword.search(q, 1)
    sets = queries(n_queries)
    out: dict[str, Any] = {"latency": {}, "empty": {}}
    for name, texts in sets.items():
        for method, fn in methods.items():
            for q in texts:  # steady state: a replica serves from the page cache, not from the disk
                fn(q)
            seconds, empty = [], 0
            for q in texts:
                started = time.perf_counter()
                empty += not fn(q)
                seconds.append(time.perf_counter() - started)
            out["latency"][f"{method}/{name}"] = percentiles(seconds)
            out["empty"][f"{method}/{name}"] = empty
    urls = open_urls(engine.index.dense.all_chunk_ids(), n_queries)
    for url in urls:
        open_page(engine, OpenUrlArgs(url))
    seconds, failed = [], 0
    for url in urls:
        started = time.perf_counter()
        failed += not open_page(engine, OpenUrlArgs(url)).content.startswith("# ")  # views: their title first
        seconds.append(time.perf_counter() - started)
    out["latency"]["open_url"], out["empty"]["open_url"] = percentiles(seconds), failed
    out["recall"] = recall_at_10(engine.index, sets["keyword"] + sets["question"])
    return out


def recall_at_10(index: WikiIndex, texts: list[str]) -> dict[str, Any]:
    """Recall@10 of ``index.dense.search`` (all shards) against exact inner product over the stored vectors,
    streamed block by block; also the p50/p99 of the dense search alone."""
    from sws.index.vectors import VectorSet

    q = index.embedder.embed_queries(texts)
    found, seconds = [], []
    for row in q:
        started = time.perf_counter()
        found.append({r for r, _ in index.dense.search(row, TOP_K)})
        seconds.append(time.perf_counter() - started)
    best_s, best_r, start = np.full((len(q), 0), -np.inf, np.float32), np.zeros((len(q), 0), np.int64), 0
    for block in VectorSet.open(index.manifest["vectors"]["path"]).iter_blocks():
        scores = q @ block.astype(np.float32).T
        rows = np.broadcast_to(np.arange(start, start + len(block)), scores.shape)
        best_s, best_r = np.hstack([best_s, scores]), np.hstack([best_r, rows])
        keep = np.argsort(-best_s, axis=1, kind="stable")[:, :TOP_K]
        best_s, best_r = np.take_along_axis(best_s, keep, 1), np.take_along_axis(best_r, keep, 1)
        start += len(block)
    recall = np.mean([len(f & set(t)) / TOP_K for f, t in zip(found, best_r.tolist())])
    return {"recall_at_10": round(float(recall), 4), "queries": len(q), "dense_search": percentiles(seconds)}


def replica_memory() -> list[dict[str, int]]:
    """``memory`` of each running Ray Serve ``RetrievalIngress`` replica process on this machine."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"RetrievalIngress" in (proc / "cmdline").read_bytes():
                out.append(memory(proc.name))
        except OSError:  # the process ended meanwhile
            continue
    return out
