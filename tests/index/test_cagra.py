"""The GPU (CAGRA) build path of the dense index: the builder choice, and the CPU half of the conversion
(an HNSW graph moved onto fp16 codes) on the graph shape ``GpuIndexCagra.copyTo`` produces. The CAGRA build
itself runs only where faiss-gpu-cuvs sees a GPU."""

import faiss
import numpy as np
import pytest

from sws.index.dense import cagra
from sws.index.dense.cagra import build_cagra_hnsw, gpu_build_available, with_fp16_storage
from sws.index.dense.indexer import CHUNK_IDS_FILE, FaissIndexer, shard_file, write_chunk_ids
from sws.index.dense.searcher import FaissSearcher


def _unit_rows(n: int, dim: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    faiss.normalize_L2(x)
    return x


class _Vectors:
    """The part of ``VectorSet`` the indexer reads, over an array in blocks of 2,500 rows."""

    def __init__(self, x: np.ndarray, path):
        self.x, self.path, self.rows, self.dim = x, path, len(x), x.shape[1]

    def iter_blocks(self):
        for start in range(0, self.rows, 2500):
            yield self.x[start : start + 2500]


def _recall_at_10(index, x: np.ndarray, queries: np.ndarray) -> float:
    exact = faiss.IndexFlatIP(x.shape[1])
    exact.add(x)
    _, truth = exact.search(queries, 10)
    _, found = index.search(queries, 10)
    return np.mean([len(set(t) & set(f)) / 10 for t, f in zip(truth, found, strict=True)])


def _copy_to_shaped_graph(x: np.ndarray, m: int) -> faiss.IndexHNSWCagra:
    """What ``copyTo`` leaves: an ``IndexHNSWCagra`` with levels above 0, over fp32 flat storage."""
    graph = faiss.IndexHNSWCagra(x.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    graph.base_level_only = False
    graph.hnsw.efConstruction = 80
    graph.add(x)
    return graph


def test_graph_moves_onto_fp16_codes_and_searches_deterministically(tmp_path):
    x, queries = _unit_rows(6000, 48), _unit_rows(200, 48, seed=1)
    graph = _copy_to_shaped_graph(x, m=16)
    index = with_fp16_storage(graph, x, ef_search=96)
    storage = faiss.downcast_index(index.storage)
    assert (
        isinstance(storage, faiss.IndexScalarQuantizer) and storage.sq.qtype == faiss.ScalarQuantizer.QT_fp16
    )
    assert index.ntotal == 6000 and index.hnsw.max_level == graph.hnsw.max_level and not index.base_level_only
    assert _recall_at_10(index, x, queries) >= 0.95

    faiss.write_index(index, str(tmp_path / shard_file(0)))
    write_chunk_ids(tmp_path / CHUNK_IDS_FILE, [f"{i}_0" for i in range(6000)])
    searcher = FaissSearcher(tmp_path, [{"file": shard_file(0), "start": 0, "rows": 6000}])
    first = [searcher.search(q, 10) for q in queries[:20]]
    assert first == [searcher.search(q, 10) for q in queries[:20]]  # no random entry points
    assert [hits[0][0] for hits in (searcher.search(v, 1) for v in x[:50])] == list(range(50))


def test_graph_and_vectors_must_match():
    x = _unit_rows(300, 16)
    with pytest.raises(ValueError, match="links 300 vectors, got 299"):
        with_fp16_storage(_copy_to_shaped_graph(x, m=8), x[:299], ef_search=32)


def test_builder_choice(monkeypatch):
    monkeypatch.setattr(cagra, "gpu_build_available", lambda: False)
    assert FaissIndexer().builder == "cpu" and FaissIndexer().params()["type"] == "IndexHNSWSQ/fp16/ip"
    monkeypatch.setattr(cagra, "gpu_build_available", lambda: True)
    gpu = FaissIndexer()
    assert gpu.builder == "gpu"
    assert gpu.params()["type"] == "IndexHNSWCagra/fp16/ip" and gpu.params()["builder"] == "cagra"
    assert FaissIndexer(builder="cpu").params() != gpu.params()  # another index, another fingerprint
    with pytest.raises(ValueError, match="builder='tpu'"):
        FaissIndexer(builder="tpu")


def test_gpu_build_without_a_gpu_names_the_install(monkeypatch):
    monkeypatch.setattr(cagra, "gpu_build_available", lambda: False)  # as on a machine without one
    with pytest.raises(RuntimeError, match="faiss-gpu-cuvs"):
        build_cagra_hnsw(_unit_rows(100, 16), m=8, ef_construction=40, ef_search=32)


def test_gpu_builder_hands_each_whole_shard_to_cagra(tmp_path, monkeypatch):
    """CAGRA builds a graph once per shard: the indexer buffers whole shards (not ``add_batch`` rows)."""
    seen = []

    def cpu_stand_in(x, m, ef_construction, ef_search, device=0):
        seen.append(len(x))
        return with_fp16_storage(_copy_to_shaped_graph(x, m), x, ef_search)

    monkeypatch.setattr(cagra, "build_cagra_hnsw", cpu_stand_in)
    x = _unit_rows(7000, 32)
    indexer = FaissIndexer(m=8, ef_search=64, shard_rows=4000, add_batch=1000, builder="gpu")
    layout = indexer.build(_Vectors(x, tmp_path), [f"{i}_0" for i in range(len(x))], tmp_path / "faiss")
    assert seen == [4000, 3000] and [s["rows"] for s in layout["shards"]] == [4000, 3000]
    searcher = FaissSearcher(tmp_path / "faiss", layout["shards"])
    assert [searcher.search(v, 1)[0][0] for v in x[3990:4010]] == list(range(3990, 4010))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_build_available(), reason="needs a GPU with faiss-gpu-cuvs (the faiss-gpu extra)")
def test_cagra_shards_on_the_gpu(tmp_path):
    x, queries = _unit_rows(20000, 64), _unit_rows(200, 64, seed=1)
    indexer = FaissIndexer(m=16, ef_search=96, shard_rows=12000, builder="gpu")
    layout = indexer.build(_Vectors(x, tmp_path), [f"{i}_0" for i in range(len(x))], tmp_path / "faiss")
    assert [s["rows"] for s in layout["shards"]] == [12000, 8000]
    searcher = FaissSearcher(tmp_path / "faiss", layout["shards"])
    assert isinstance(searcher.shards[0][1], faiss.IndexHNSWCagra)
    assert [searcher.search(v, 1)[0][0] for v in x[:50]] == list(range(50))
    assert _recall_at_10(searcher.shards[1][1], x[12000:], queries) >= 0.95
