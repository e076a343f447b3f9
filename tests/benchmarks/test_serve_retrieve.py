"""``benchmarks/serve_retrieve.py``'s floor: the in-process batch, embedded as the served side embeds."""

from __future__ import annotations

from tests.benchmarks.conftest import bench_module


def test_the_floor_is_the_served_batch_in_this_process(leads_root):
    """The floor's engine finds what the service finds for the same batch (its runtime the served default)."""
    from sws.search import SearchEngine

    engine = bench_module("serve_retrieve").floor_engine(leads_root / "index")
    queries = ["dog breed", "Bitcoin"] * 4
    expected = SearchEngine.open(leads_root / "index").batch_search(queries, 3, "rrf")
    found = engine.batch_search(queries, 3, "rrf")
    assert [[h.chunk.chunk_id for h in q] for q in found] == [[h.chunk.chunk_id for h in q] for q in expected]
