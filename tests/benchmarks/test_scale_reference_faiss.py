"""``benchmarks/scale_reference_faiss.py``: the reference's FAISS form built, cached and opened as sws opens it,
end to end at a toy size; and the projection of its figures to the paper's 10.8M vectors."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from tests.benchmarks.conftest import BENCHMARKS, bench_module

bench = bench_module("scale_reference_faiss")
projection = bench_module("scale_projection")
TOY = ["--vectors", "2000", "--probe", "500", "--dim", "32", "--queries", "20"]


def _records(out: str) -> dict[str, list[dict]]:
    records: dict[str, list[dict]] = {}
    for line in out.splitlines():
        record = json.loads(line)
        records.setdefault(record["measurement"], []).append(record)
    return records


def test_vectors_are_unit_deterministic_and_clustered():
    p = {"vectors": 100, "dim": 64, "m": 8, "ef_construction": 40, "ef_search": 16, "clusters": 4, "seed": 0}
    a, b = bench.vector_block(p, 0, 50), bench.vector_block(p, 0, 50)
    assert a.shape == (50, 64) and np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(a, bench.vector_block(p, 0, 50, stream=2))  # queries are other draws
    cosines = a @ a.T
    assert 0.4 < cosines.max(axis=1, where=~np.eye(50, dtype=bool), initial=-1).mean() < 0.99


def test_a_toy_run_builds_once_and_measures_the_mmap_open(tmp_path):
    run = [sys.executable, str(BENCHMARKS / "scale_reference_faiss.py"), *TOY, "--out", str(tmp_path)]
    done = subprocess.run(run, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: the RSS goal, which a toy file cannot meet
    first = _records(done.stdout)
    assert [r["cached"] for r in first["build"]] == [True, False]  # the probe was built for its rate
    (rate,) = first["build_rate"]
    assert not rate["cached"] and rate["projected_build_s_log_n"] >= rate["projected_build_s_linear"] > 0
    (file,) = first["file"][1:]
    assert file["codes_bytes"] == 2000 * 32 * 2 and file["bytes"] == file["codes_bytes"] + file["graph_bytes"]
    cold, warm = first["open"][2:]
    assert (cold["side"], warm["side"]) == ("cold", "warm")
    assert cold["params"] == {
        "type": "IndexHNSWSQ/fp16/ip",
        "metric": "ip",
        "m": 32,
        "ef_search": 64,
        "ef_construction": 200,
        "dim": 32,
    }
    assert warm["recall_at_10"] > 0.9 and warm["latency_ms"]["p99_ms"] >= warm["latency_ms"]["p50_ms"] > 0
    (mmap,) = first["mmap"]
    assert mmap["rss_anon_added_plain_read"] > mmap["rss_anon_added_mmap"]  # the plain read holds the file
    assert len(first["replicas"]) == 2
    (summary,) = first["summary"]
    assert summary["projection"]["from"] == [500, 2000] and summary["projection"]["vectors"] == 10_837_506
    again = _records(subprocess.run(run, capture_output=True, text=True, check=False, timeout=300).stdout)
    assert [r["cached"] for r in again["build"]] == [True, True]  # a rerun skips the builds


def test_an_interrupted_build_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "BLOCK", 500)
    p = {"vectors": 1500, "dim": 16, "m": 8, "ef_construction": 40, "ef_search": 16, "clusters": 8, "seed": 0}
    path = bench.index_path(tmp_path, p)
    whole = bench.build(p, path, checkpoint_rows=10**9)
    partial = path.with_name(path.name + ".partial")
    done = {"n": 0}
    real_add = bench._new_index(p).__class__.add

    class Stop(Exception):
        pass

    def add_twice(self, x):
        if done["n"] == 2:
            raise Stop
        done["n"] += 1
        return real_add(self, x)

    path.unlink()
    monkeypatch.setattr(bench._new_index(p).__class__, "add", add_twice)
    with pytest.raises(Stop):
        bench.build(p, path, checkpoint_rows=500)
    assert partial.is_file() and json.loads(partial.with_suffix(".json").read_text())["rows"] == 1000
    monkeypatch.setattr(bench._new_index(p).__class__, "add", real_add)
    resumed = bench.build(p, path, checkpoint_rows=500)
    assert not partial.exists() and resumed["params"] == whole["params"]
    import faiss

    assert faiss.read_index(str(path)).ntotal == 1500


def test_the_projection_is_linear_in_bytes_and_a_power_law_in_warm_latency():
    def fig(n, ms):
        return {
            "vectors": n,
            "file_bytes": 2300 * n,
            "graph_bytes": 270 * n,
            "open": {"cold_s": n / 1e5, "warm_s": n / 1e6},
            "rss_after_open": 270 * n,
            "rss_anon_after_open": 12 * n,
            "latency": {side: {"p50_ms": ms, "p99_ms": 2 * ms, "mean_ms": ms} for side in ("cold", "warm")},
        }

    out = projection.reference_faiss(fig(100_000, 1.0), fig(1_000_000, 2.0), 10_000_000)
    assert (out["file_gb"], out["graph_gb"], out["replica_rss_anon_after_open_gb"]) == (23.0, 2.7, 0.12)
    assert out["open_seconds"] == {"cold": 100.0, "warm": 10.0}
    assert out["latency_ms"]["warm"]["p50_ms"] == pytest.approx(4.0)  # doubles per decade
    assert out["latency_ms"]["cold"]["p50_ms"] == 2.0  # as measured at the larger size
    assert out["vector_search_qps_per_core"] == 250.0
    scale = {
        "sizes": {
            str(n): {
                "latency": {
                    f"{m}/question": {"mean_ms": ms * k}
                    for m, k in (("keywords", 10.0), ("vector", 1.5), ("rrf", 11.0))
                },
                "recall": {"dense_search": {"mean_ms": ms}},
            }
            for n, ms in ((100_000, 1.0), (1_000_000, 2.0))
        }
    }
    row = projection.reference_row(out, scale, embed_qps_per_core=4.0)
    assert row["mean_ms"] == {"keywords": 40.0, "vector": 6.0, "rrf": 44.0}  # at 10M: 40, 2 + 4, 40 + 4
    assert row["qps_per_core"]["keywords"] == 25.0
    assert row["qps_per_core_with_cpu_query_embedding"]["vector"] == round(1000 / 256, 1)
    assert "released index" in projection.reference_readme_row(row)
    assert math.isfinite(row["qps_per_core"]["rrf"])
