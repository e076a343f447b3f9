"""``benchmarks/embed_runtimes.py`` and ``serve_vs_reference.py``: their measuring parts on real inputs."""

from __future__ import annotations

from tests.benchmarks.conftest import bench_module, skips_without_harness


def test_recall_is_one_against_itself_and_timings_cover_whole_batches(leads_root, embedder, monkeypatch):
    bench = bench_module("embed_runtimes")
    queries = ["Who painted the Mona Lisa?", "capital of France", "When did the Berlin Wall fall?"] * 3
    assert bench.recall_at_10(leads_root / "index", embedder, embedder.embed_queries(queries), queries) == 1.0
    calls = []
    embed = embedder.embed_queries
    monkeypatch.setattr(embedder, "embed_queries", lambda texts: calls.append(len(texts)) or embed(texts))
    assert bench.ms_per_query(embedder, queries, batch=4, limit=9) > 0
    assert calls == [4, 4, 4]  # one warm batch, then the 8 queries of two whole batches


def test_the_side_by_side_says_what_is_missing_and_reads_both_sides_alike(tmp_path):
    assert skips_without_harness("serve_vs_reference", tmp_path)
    result = {"qps": 12.345, "failed": 3, "latency_ms_ok": {"n": 2, "p99": 10.6}, "started": 250}
    side = bench_module("serve_vs_reference").side
    assert side(result) == {"qps": 12.3, "p99_ms": 11, "failed": 3, "asked": 250}
    assert side(result | {"latency_ms_ok": {"n": 0}})["p99_ms"] is None


def test_a_cell_pools_its_rounds_and_flags_repeated_questions():
    bench = bench_module("serve_vs_reference")

    def window(qps, failed=0, asked=1000):
        return {"qps": qps, "p99_ms": 50, "failed": failed, "asked": asked}

    swinging = [(window(400.0), window(300.0)), (window(200.0), window(320.0))]  # 0.75 then 1.6
    verdict = bench.pooled(swinging, "keywords")
    assert (verdict["ratio"], verdict["round_ratios"], verdict["passed"]) == (1.03, [0.75, 1.6], True)
    assert not bench.pooled([(window(400.0), window(300.0))], "keywords")["passed"]
    assert not bench.pooled([(window(10.0), window(30.0, failed=1))], "rrf")["passed"]  # 3x, one failed
    many = bench.START_STRIDE + 1
    overlapping = [(window(10.0, asked=many), window(30.0)), (window(10.0), window(30.0))]
    assert bench.pooled(overlapping, "rrf")["repeats"]
    assert not bench.pooled(overlapping, "keywords")["repeats"]  # nothing cached
    assert not bench.pooled(overlapping[::-1], "rrf")[
        "repeats"
    ]  # the last window's questions are not asked again
