"""``benchmarks/scale_index.py`` at 20k chunks and 4 shards (``--quick``, no serving): the same code as the 1M run.

Reads the benchmark data from ``tests/data`` (copies of ``../shared/data/bench`` and ``qa``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sws.index.dense.searcher import read_chunk_ids

REPO = Path(__file__).resolve().parents[2]
STAGE_PEAK_BOUND = 1.5e9  # 20k chunks hold 126 MB of text; Tantivy's writer heap is 512 MB

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scale_run(tmp_path_factory) -> tuple[Path, dict[str, list[dict]]]:
    out = tmp_path_factory.mktemp("scale")
    cmd = [
        sys.executable,
        "benchmarks/scale_index.py",
        "--quick",
        "--shards",
        "4",
        "--served-methods",
        "--out",
        str(out),
    ]
    env = {**os.environ, "SWS_BENCH_DATA": str(REPO / "tests" / "data")}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records: dict[str, list[dict]] = {}
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        records.setdefault(record["measurement"], []).append(record)
    return out / "chunks-20000", records


def test_four_shards_aligned_with_the_corpus(scale_run):
    root, records = scale_run
    manifest = json.loads((root / "index" / "manifest.json").read_text())
    shards = manifest["dense"]["shards"]
    assert [s["file"] for s in shards] == [f"shard-{i:05d}.faiss" for i in range(4)]
    assert all((root / "index" / "faiss" / s["file"]).is_file() for s in shards)
    assert [s["start"] for s in shards] == [0, 5000, 10000, 15000] and sum(s["rows"] for s in shards) == 20000
    corpus_ids = pq.read_table(root / "corpus" / "chunks", columns=["chunk_id"]).column(0).to_pylist()
    assert read_chunk_ids(root / "index" / "faiss" / "chunk_ids.arrow").to_pylist() == corpus_ids
    assert manifest["embedder"]["spec"]["kind"] == "hashing"
    assert records["disk"][0]["faiss_graph"] > 0 and records["disk"][0]["shards"] == 4


def test_every_method_returns_results(scale_run):
    _, records = scale_run
    latency = {r["method"]: r for r in records["latency"]}
    expected = {
        f"{m}/{s}"
        for m in ("keywords", "keywords_top1", "vector", "rrf", "only_title")
        for s in ("keyword", "question")
    }
    assert set(latency) == expected | {"open_url"}
    for method, record in latency.items():
        assert record["p50_ms"] > 0 and record["p99_ms"] >= record["p50_ms"]
        assert record["empty"] < 50 if method != "open_url" else record["empty"] == 0, method
    assert all(latency[f"{m}/question"]["empty"] == 0 for m in ("vector", "rrf", "keywords"))


def test_recall_of_the_scale_embedder_is_measured(scale_run):
    _, records = scale_run
    recall = records["recall"][0]
    assert recall["embedder"] == "hashing" and recall["queries"] == 100
    assert recall["recall_at_10"] >= 0.8


def test_stages_measured_and_bounded(scale_run):
    _, records = scale_run
    stages = {r["stage"]: r for r in records["stage"]}
    assert set(stages) == {"corpus", "embed", "tantivy", "faiss", "build_index"}
    for name, record in stages.items():
        assert record["peak_exact"] and record["seconds"] > 0, name
        assert record["rss_before"] <= record["peak_rss"] <= STAGE_PEAK_BOUND, name
        assert 0 < record["peak_rss_anon"] <= record["peak_rss"], name
    opened = records["open"][0]
    assert opened["cold"]["seconds"] > 0 and opened["warm"]["rss"] > 0
    summary = records["summary"][0]
    assert summary["goals"]["replica_rss_beyond_graph_20000"]["ok"]
    growth = summary["keyword_growth"]  # one size: each latency against itself
    assert set(growth) == {f"{m}/{s}" for m in ("keywords_top1", "keywords") for s in ("keyword", "question")}
    assert all(value == 1.0 for value in growth.values())
