"""``benchmarks/floor.py`` (``serve_floor.py``'s floor): batches embedded up front, then searched with their
vectors."""

from __future__ import annotations

from sws.index import WikiIndex
from sws.search import SearchEngine
from tests.benchmarks.conftest import bench_module

QUERIES = ["Who painted the Mona Lisa?", "capital of France", "When did the Berlin Wall fall?"]


def test_floor_round_embeds_a_batch_once_and_counts_whole_batches(leads_root, embedder, monkeypatch):
    """A round runs at least one batch, however late its thread gets to run: with no time left, exactly one;
    its queries are embedded together, up front, and the searches embed nothing."""
    engine = SearchEngine(WikiIndex.open(leads_root / "index", embedder=embedder))
    dense, batches = engine.searchers["vector"], []  # the rrf searcher embeds through it too
    embed = dense.embed
    monkeypatch.setattr(dense, "embed", lambda queries: batches.append(list(queries)) or embed(queries))
    out = bench_module("floor").floor_round(engine, QUERIES, "rrf", batch=3, threads=2, seconds=0)
    assert (out["requests"], out["threads"], out["batch"], batches) == (3, 2, 3, [QUERIES]) and out[
        "qps"
    ] >= 0
