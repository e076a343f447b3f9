"""``benchmarks/serve_retrieve.py``'s floor: the in-process batch, embedded as the served side embeds."""

from __future__ import annotations

from tests.benchmarks.conftest import bench_module


def test_the_floor_counts_queries_per_second_of_one_batch(leads_root):
    floor = bench_module("serve_retrieve").floor_qps(
        leads_root / "index", ["dog breed", "Bitcoin"] * 4, "rrf", 1
    )
    assert floor > 0
