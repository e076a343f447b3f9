"""HNSW shards built on a GPU: cuVS CAGRA (through faiss-gpu-cuvs) builds the level-0 graph, FAISS turns it
into a CPU HNSW that the ordinary searcher reads.

``GpuIndexCagra.copyTo`` fills an ``IndexHNSWCagra`` with the CAGRA graph (degree ``2 * m``, the level-0 degree
of an HNSW of degree ``m``) and inserts the upper levels on the CPU. It can only build the upper levels over
fp32 storage (fp16 storage gets a base level alone, searched from random entry points: not deterministic),
so the finished graph is moved onto fp16 codes of the same vectors: the storage of the CPU build, with the
same bytes per vector, the same memory-mapped reading and the usual deterministic HNSW search.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def gpu_build_available() -> bool:
    """faiss was built with cuVS (``GpuIndexCagra``) and sees at least one GPU."""
    import faiss

    return hasattr(faiss, "GpuIndexCagra") and faiss.get_num_gpus() > 0


def build_cagra_hnsw(x: np.ndarray, m: int, ef_construction: int, ef_search: int, device: int = 0) -> Any:
    """An ``IndexHNSWCagra`` (fp16 storage, inner product) over the normalised float32 rows ``x``.

    Raises:
        RuntimeError: no cuVS-enabled faiss or no GPU.
    """
    import faiss

    if not gpu_build_available():
        raise RuntimeError(
            f"the GPU index build needs faiss with cuVS and a visible GPU (faiss {faiss.__version__} has "
            f"GpuIndexCagra: {hasattr(faiss, 'GpuIndexCagra')}, GPUs: {faiss.get_num_gpus()}); install the "
            'faiss-gpu extra (faiss-gpu-cuvs, README "GPU nodes") or build with index.dense.builder=cpu'
        )
    x = np.ascontiguousarray(x, dtype=np.float32)
    config = faiss.GpuIndexCagraConfig()
    config.graph_degree = 2 * m
    config.intermediate_graph_degree = 4 * m
    config.device = device
    resources = faiss.StandardGpuResources()
    gpu_index = faiss.GpuIndexCagra(resources, x.shape[1], faiss.METRIC_INNER_PRODUCT, config)
    gpu_index.train(x)
    graph = faiss.IndexHNSWCagra(x.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    graph.base_level_only = False
    graph.hnsw.efConstruction = ef_construction
    gpu_index.copyTo(graph)
    return with_fp16_storage(graph, x, ef_search)


def with_fp16_storage(graph: Any, x: np.ndarray, ef_search: int) -> Any:
    """A new ``IndexHNSWCagra`` holding ``graph``'s HNSW links over fp16 codes of ``x`` (rows in graph order)."""
    import faiss

    if graph.ntotal != len(x):
        raise ValueError(f"the graph links {graph.ntotal} vectors, got {len(x)}")
    index = faiss.IndexHNSWCagra(
        x.shape[1], graph.hnsw.nb_neighbors(1), faiss.METRIC_INNER_PRODUCT, faiss.Float16
    )
    index.hnsw = graph.hnsw  # a copy: levels, offsets, neighbours, entry point
    index.storage.add(np.ascontiguousarray(x, dtype=np.float32))
    index.ntotal = graph.ntotal
    index.base_level_only = False
    index.hnsw.efSearch = ef_search
    return index
