"""``POST /retrieve`` (the RL trainers' retriever format) against its in-process floor, on questions of the
six QA sets, ``topk`` 3.

1. ``batched``: one request of ``--batch`` (512) queries, per method, against ``SearchEngine.batch_search`` of
   the same queries in this process (the ``floor``, its rounds alternating with the served ones while the
   service is up) and against the same queries sent one request at a time by one client (``sequential``).
   Goals: batched served >= 0.8x the floor; >= 5x the sequential rate for vector and rrf.
2. ``concurrent``: ``--clients`` (1 024) closed-loop clients sending one query each (rLLM's and SkyRL's form)
   for ``--seconds`` (30) after a 10 s warm-up, rrf. Goal: 0 failed; QPS against the floor reported.
3. ``fault``: the same load with one of 2 retrieval replicas SIGKILLed after ``--kill-after`` s. Goal: <= 1%
   failed (retryable 503s count), both replicas running again.

Run: ``timeout 1800 .venv/bin/python benchmarks/serve_retrieve.py`` (``--seconds 10`` for a short run).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import httpx
from loadgen import load
from serve_common import agent_queries, emit, json_stdout, sample_index
from serve_load import TOKEN, killed_replica_run

from serve.launch import ServeProcess

FLOOR_GOAL, SEQUENTIAL_GOAL, FAULT_GOAL = 0.8, 5.0, 0.01
TOPK = 3
BODY_BYTES = 4 << 20  # a 512-query body is over the 64 KiB default bound


def floor_engine(index: Path):
    """``SearchEngine`` over ``index`` in this process, its queries embedded as ``sws serve`` embeds them by
    default (``serve.embedding.runtime: auto``: for MiniLM on the CPU, OpenVINO bf16 or ONNX Runtime by the
    hardware)."""
    from sws.index import WikiIndex, make_embedder
    from sws.index.manifest import read_manifest
    from sws.search import SearchEngine

    spec = dict(read_manifest(index)["embedder"]["spec"]) | {"runtime": "auto", "device": "cpu"}
    engine = SearchEngine(WikiIndex.open(index, embedder=make_embedder(**spec)))
    engine.batch_search(["model loaded"] * 8, TOPK, "rrf")
    return engine


def batch_seconds(engine, client: httpx.Client, queries: list[str], method: str, repeats: int):
    """Median seconds of one batch in this process (the floor) and of one ``/retrieve`` of it, their rounds
    alternating, so that both sides see the same moments of a shared machine; a first round of each unmeasured
    (the searchers' word memos filled)."""
    body = {"queries": queries, "topk": TOPK, "method": method}
    floor, served = [], []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        engine.batch_search(queries, TOPK, method)
        floor.append(time.perf_counter() - start)
        start = time.perf_counter()
        client.post("/retrieve", json=body).raise_for_status()
        served.append(time.perf_counter() - start)
    return statistics.median(floor[1:]), statistics.median(served[1:])


def sequential_qps(client: httpx.Client, queries: list[str], method: str) -> float:
    start = time.perf_counter()
    for query in queries:
        client.post("/retrieve", json={"query": query, "top_k": TOPK, "method": method}).raise_for_status()
    return len(queries) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="index directory (default: the bundled sample)")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clients", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--kill-after", type=float, default=5.0)
    parser.add_argument("--skip", choices=["batched", "concurrent", "fault"], action="append", default=[])
    args = parser.parse_args()
    json_stdout()
    index = args.index or sample_index()
    queries = agent_queries("questions", args.batch)
    singles = [("/retrieve", {"query": q, "top_k": TOPK, "method": "rrf"}) for q in queries]
    engine = floor_engine(index)
    ok, floors = True, {}
    serve_args = ["--replicas", "2", f"serve.max_body_bytes={BODY_BYTES}"]
    with ServeProcess(index, token=TOKEN, args=serve_args, log_path=str(index) + "-retrieve.log") as server:
        headers = {"authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=300, trust_env=False) as client:
            for method in ("keywords", "vector", "rrf"):
                floor_s, served_s = batch_seconds(engine, client, queries, method, args.repeats)
                floors[method] = len(queries) / floor_s
                if "batched" in args.skip:
                    continue
                batched = len(queries) / served_s
                sequential = sequential_qps(client, queries, method)
                passed = batched >= FLOOR_GOAL * floors[method] and (
                    method == "keywords" or batched >= SEQUENTIAL_GOAL * sequential
                )
                ok &= passed
                emit(
                    "serve_retrieve",
                    "batched",
                    method=method,
                    queries=len(queries),
                    floor_qps=round(floors[method], 1),
                    batched_qps=round(batched, 1),
                    sequential_qps=round(sequential, 1),
                    ratio=round(batched / floors[method], 2),
                    vs_sequential=round(batched / sequential, 2),
                    goal=f"ratio >= {FLOOR_GOAL}; vector/rrf vs_sequential >= {SEQUENTIAL_GOAL}",
                    passed=passed,
                )
        if "concurrent" not in args.skip:
            load(server.url, singles, clients=args.clients, seconds=10.0, token=TOKEN)  # warm up
            summary = load(
                server.url, singles, clients=args.clients, seconds=args.seconds, token=TOKEN
            ).summary()
            passed = summary["failed"] == 0
            ok &= passed
            ratio = round(summary["qps"] / floors["rrf"], 2)
            emit("serve_retrieve", "concurrent", **summary, vs_floor=ratio, goal="failed == 0", passed=passed)
        if "fault" not in args.skip:
            result, recovery_s = killed_replica_run(
                server, singles, args.clients, args.seconds, args.kill_after
            )
            rate = result.failed / max(1, result.requests)
            passed = rate <= FAULT_GOAL and recovery_s is not None
            ok &= passed
            emit(
                "serve_retrieve",
                "fault",
                **result.summary(),
                failed_rate=round(rate, 4),
                recovery_s=recovery_s,
                goal=f"failed <= {FAULT_GOAL:.0%} and recovered",
                passed=passed,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
