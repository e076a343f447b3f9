"""Shared helpers of the ``benchmarks/serve_*.py`` scripts (not a benchmark itself).

The index is the bundled enwiki sample (106 articles, ~480 chunks) built once with the packaged MiniLM
under ``benchmarks/results/work/serve-sample`` (or any ``--index``). Requests are the tool calls an agent
makes: ``search`` per method with ``--queries`` (:data:`QUERY_SETS`: ``questions`` of the six QA sets in
``tests/data/qa``, interleaved, as an agent asks them; ``keywords``, the search-benchmark-game's short AOL
queries; ``headings``, the corpus' titles and section headings, the figures before issue 15), and ``open_url``
of chunk URLs (every fifth one a whole article).
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
DATA = REPO / "tests" / "data"
QA_FILES = (  # tests/data/qa: one file of each of the six QA sets
    "2wikimultihop_test_questions_and_answers.json",
    "bamboogle_test_questions_and_answers.json",
    "frames_test_set.csv",
    "hotpotqa_test_questions_and_answers.json",
    "musique_test_questions_and_answers.json",
    "popqa_test_sample1000_seed42.flashrag.jsonl",
)
QUERY_SETS = ("questions", "keywords", "headings")
METHODS = ("keywords", "vector", "rrf", "open_url")
ToolCall = tuple[str, str]  # (tool name, arguments JSON)

__all__ = [
    "MACHINE",
    "METHODS",
    "QUERY_SETS",
    "add_queries_flag",
    "emit",
    "inprocess_load",
    "json_stdout",
    "sample_index",
    "tool_calls",
]


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


def agent_queries(kind: str, limit: int) -> list[str]:
    """``limit`` queries of a :data:`QUERY_SETS` set other than ``headings`` (deterministic)."""
    if kind == "keywords":
        lines = (DATA / "bench" / "search-benchmark-game_queries.jsonl").read_text().splitlines()
        return [json.loads(line)["query"] for line in lines[:limit]]
    if kind != "questions":
        raise ValueError(f"unknown query set {kind!r} (known: {', '.join(QUERY_SETS)})")
    from sws.eval.datasets import load_dataset

    per_set = [[item.question.strip() for item in load_dataset(DATA / "qa" / name)] for name in QA_FILES]
    mixed = [
        q for row in zip(*(qs[: -(-limit // len(QA_FILES))] for qs in per_set), strict=False) for q in row
    ]
    return mixed[:limit]


def tool_calls(index: Path, limit: int = 400, queries: str = "questions") -> dict[str, list[ToolCall]]:
    """Per method, a deterministic list of tool calls over this index's pages; searches ask ``queries``
    (a :data:`QUERY_SETS` name)."""
    import pyarrow.parquet as pq

    manifest = json.loads((index / "manifest.json").read_text())
    chunks = pq.read_table(
        Path(manifest["corpus"]["path"]) / "chunks", columns=["page_id", "title", "chunk_index", "section"]
    )
    rows = chunks.to_pylist()
    if queries == "headings":
        texts = []
        for row in rows[:limit]:
            heading = (row["section"] or "").split(":", 1)[-1].strip()
            texts.append(row["title"] if row["chunk_index"] == 0 else f"{row['title']} {heading}".strip())
    else:
        texts = agent_queries(queries, limit)
    calls: dict[str, list[ToolCall]] = {
        method: [("search", json.dumps({"query": q, "top_k": 10, "method": method})) for q in texts]
        for method in ("keywords", "vector", "rrf")
    }
    urls = []
    for i, row in enumerate(rows[:limit]):
        fragment = "" if i % 5 == 4 else f"#chunk-{row['chunk_index'] + 1}"
        urls.append(f"https://en.wikipedia.org/wiki/{row['page_id']}{fragment}")
    calls["open_url"] = [("open_url", json.dumps({"url": url})) for url in urls]
    return calls


def add_queries_flag(parser: Any) -> None:
    """``--queries``: the search query set (:data:`QUERY_SETS`)."""
    parser.add_argument(
        "--queries",
        choices=QUERY_SETS,
        default="questions",
        help="search queries: QA questions (agent-like, default), keywords (short AOL queries) or headings",
    )


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
