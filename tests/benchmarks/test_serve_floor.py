"""``benchmarks/floor.py`` (``serve_floor.py``'s floor): searches with a batch's vectors computed up front give the
engine's results."""

from __future__ import annotations

import pytest

from sws.index import WikiIndex
from sws.search import SearchEngine
from tests.benchmarks.conftest import bench_module

QUERIES = [
    "Who painted the Mona Lisa?",
    "capital of France",
    "When did the Berlin Wall fall?",
    "Ada Lovelace",
]


@pytest.fixture(scope="module")
def serve_floor():
    return bench_module("floor")


def ids(hits):
    return [hit.chunk.chunk_id for hit in hits]


@pytest.mark.parametrize("method", ["vector", "rrf"])
def test_prefetched_vectors_give_the_engines_results(serve_floor, leads_root, embedder, method):
    prefetched = serve_floor.PrefetchedEmbedder(embedder)
    floor = SearchEngine(WikiIndex.open(leads_root / "index", embedder=prefetched))
    engine = SearchEngine(WikiIndex.open(leads_root / "index", embedder=embedder))
    prefetched.prefetch(QUERIES)
    for query in QUERIES:
        assert ids(floor.search(query, 10, method)) == ids(engine.search(query, 10, method))
    with pytest.raises(KeyError):  # the floor never embeds inside a search
        floor.search("a query of no batch", 10, method)


def test_floor_round_counts_whole_batches(serve_floor, leads_root, embedder):
    """A round runs at least one batch, however late its thread gets to run: with no time left, exactly one."""
    prefetched = serve_floor.PrefetchedEmbedder(embedder)
    floor = SearchEngine(WikiIndex.open(leads_root / "index", embedder=prefetched))
    out = serve_floor.floor_round(floor, prefetched, QUERIES, "rrf", batch=3, threads=2, seconds=0)
    assert (out["requests"], out["threads"], out["batch"]) == (3, 2, 3) and out["qps"] >= 0
