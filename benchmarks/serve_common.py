"""Shared helpers of the ``benchmarks/serve_*.py`` scripts (not a benchmark itself).

The index is the bundled enwiki sample (106 articles, ~480 chunks) built once with the packaged MiniLM
under ``benchmarks/results/work/serve-sample`` (or any ``--index``). Requests are the tool calls an agent
makes: ``search`` per method with queries made from the corpus' titles and section headings, and
``open_url`` of chunk URLs (every fifth one a whole article).
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:  # run as `python benchmarks/serve_x.py` without installing
        sys.path.insert(0, str(path))

from corpus_common import MACHINE, emit, json_stdout
from loadgen import percentile

WORK = REPO / "benchmarks" / "results" / "work"
METHODS = ("keywords", "vector", "rrf", "open_url")
ToolCall = tuple[str, str]  # (tool name, arguments JSON)

__all__ = ["MACHINE", "METHODS", "emit", "inprocess_load", "json_stdout", "sample_index", "tool_calls"]


def sample_index(work: Path = WORK) -> Path:
    """``work/serve-sample/index``: the bundled sample's corpus (local Ray) and MiniLM index, built if missing."""
    root = work / "serve-sample"
    index = root / "index"
    if (index / "manifest.json").is_file():
        return index
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from sws.config import bundled_sample_dump, load_config, to_dict
    from sws.corpus.build import build_corpus
    from sws.index import SentenceTransformerEmbedder, build_index

    cfg = to_dict(load_config("local"))
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        build_corpus(
            [bundled_sample_dump()], root / "corpus", clean=cfg["clean"], chunk=cfg["chunk"], progress=False
        )
    finally:
        ray.shutdown()
    build_index(
        root / "corpus",
        index,
        embedder=SentenceTransformerEmbedder(device="cpu"),
        embed_options={"workers": 0},
    )
    return index


def tool_calls(index: Path, limit: int = 400) -> dict[str, list[ToolCall]]:
    """Per method, a deterministic list of tool calls over this index's pages."""
    import pyarrow.parquet as pq

    manifest = json.loads((index / "manifest.json").read_text())
    chunks = pq.read_table(
        Path(manifest["corpus"]["path"]) / "chunks", columns=["page_id", "title", "chunk_index", "section"]
    )
    rows = chunks.to_pylist()
    queries: list[str] = []
    for row in rows:
        heading = (row["section"] or "").split(":", 1)[-1].strip()
        queries.append(row["title"] if row["chunk_index"] == 0 else f"{row['title']} {heading}".strip())
    queries = queries[:limit]
    calls: dict[str, list[ToolCall]] = {
        method: [("search", json.dumps({"query": q, "top_k": 10, "method": method})) for q in queries]
        for method in ("keywords", "vector", "rrf")
    }
    urls = []
    for i, row in enumerate(rows[:limit]):
        fragment = "" if i % 5 == 4 else f"#chunk-{row['chunk_index'] + 1}"
        urls.append(f"https://en.wikipedia.org/wiki/{row['page_id']}{fragment}")
    calls["open_url"] = [("open_url", json.dumps({"url": url})) for url in urls]
    return calls


def http_requests(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any]]]:
    return [("/call", {"name": name, "arguments": arguments}) for name, arguments in calls]


def inprocess_load(tools: Any, calls: list[ToolCall], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads calling ``tools.call_tool`` back to back (the in-process engine baseline)."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    def client(i: int) -> None:
        n = i
        while time.perf_counter() < deadline:
            name, arguments = calls[n % len(calls)]
            n += clients
            t0 = time.perf_counter()
            tools.call_tool(name, arguments)
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    elapsed = time.perf_counter() - start
    lat = sorted(latencies)
    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "requests": len(lat),
        "qps": round(len(lat) / elapsed, 1),
        "p50_ms": round(percentile(lat, 0.5) * 1e3, 2),
        "p99_ms": round(percentile(lat, 0.99) * 1e3, 2),
    }
