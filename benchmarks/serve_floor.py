"""Served vector and rrf search against their floor on this machine, and against the reference tool server.

The floor is what one process with all cores does without any serving: the questions are embedded in
batches of ``--batch`` (one forward pass per batch, the runtime's threads = ``--floor-threads``, default
every core), then each batch is searched by the engine (``SearchEngine.search``: Tantivy, FAISS, fusion,
hydration) from as many threads, each query with its vector already computed (``search(..., vector=)``).
Both thread settings 1 and all cores are measured and the better one is the floor. The served side is ``sws serve`` (1 retrieval replica, batched
query embeddings, ``serve.embedding.runtime`` = ``--runtime``) under closed-loop ``POST /call`` clients,
the same questions, alternating with the floor rounds so both see the same machine.

One JSON line per round, then per method and client count a ``summary`` with the medians, ``ratio`` =
served / floor QPS (goal >= 0.8). Against the reference tool server: ``../shared/peer`` measures both side by side
in one run (``benchmarks/README.md`` "Query embedding runtimes"); no figure from another run is divided here.

Run: ``timeout 1800 .venv/bin/python benchmarks/serve_floor.py`` (~6 min; ``--runtime torch`` for the PyTorch path).
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

from floor import floor_round
from loadgen import load
from serve_common import agent_queries, emit, http_requests, json_stdout, sample_index, tool_calls

from serve.launch import ServeProcess

FLOOR_GOAL = 0.8


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="index directory (default: the bundled sample)")
    parser.add_argument(
        "--runtime",
        choices=("auto", "torch", "onnx", "openvino"),
        default="auto",
        help="query embedding runtime",
    )
    parser.add_argument("--methods", default="vector,rrf")
    parser.add_argument("--clients", default="16,256")
    parser.add_argument("--seconds", type=float, default=10.0, help="per round")
    parser.add_argument("--repeats", type=int, default=2, help="alternating floor/served rounds")
    parser.add_argument("--batch", type=int, default=32, help="queries per forward pass of the floor")
    parser.add_argument("--floor-threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    json_stdout()
    index = args.index or sample_index()
    queries = agent_queries("questions", 400)
    calls = tool_calls(index, queries="questions")

    import torch

    from sws.index import WikiIndex, make_embedder
    from sws.index.manifest import read_manifest
    from sws.search import SearchEngine

    spec = dict(read_manifest(index)["embedder"]["spec"]) | {"runtime": args.runtime, "device": "cpu"}
    thread_counts = sorted({1, args.floor_threads})
    engines = {}
    for threads in thread_counts:  # ONNX Runtime takes torch's thread count when its session is made
        torch.set_num_threads(threads)
        engines[threads] = SearchEngine(WikiIndex.open(index, embedder=make_embedder(**spec)))

    serve_args = [f"serve.embedding.runtime={args.runtime}"]
    with ServeProcess(index, args=serve_args, log_path=str(index) + "-serve-floor.log") as server:
        emit("serve_floor", "startup", runtime=args.runtime, batch=args.batch, thread_counts=thread_counts)
        for method in args.methods.split(","):
            requests = http_requests(calls[method])
            load(server.url, requests, clients=4, seconds=1.0)  # warm up
            for clients in (int(c) for c in args.clients.split(",")):
                floors, served = [], []
                for _ in range(args.repeats):
                    for threads in thread_counts:
                        torch.set_num_threads(threads)
                        floors.append(
                            floor_round(engines[threads], queries, method, args.batch, threads, args.seconds)
                        )
                        emit("serve_floor", "floor", method=method, **floors[-1])
                    served.append(load(server.url, requests, clients=clients, seconds=args.seconds).summary())
                    emit("serve_floor", "served", method=method, **served[-1])
                best = max(
                    thread_counts,
                    key=lambda t: statistics.median(f["qps"] for f in floors if f["threads"] == t),
                )
                floor_qps = statistics.median(f["qps"] for f in floors if f["threads"] == best)
                served_qps = statistics.median(s["qps"] for s in served)
                emit(
                    "serve_floor",
                    "summary",
                    method=method,
                    queries="questions",
                    runtime=args.runtime,
                    clients=clients,
                    floor_qps=floor_qps,
                    floor_threads=best,
                    served_qps=served_qps,
                    served_p50_ms=statistics.median(s["p50_ms"] for s in served),
                    served_p99_ms=statistics.median(s["p99_ms"] for s in served),
                    served_failed=sum(s["failed"] for s in served),
                    ratio=round(served_qps / floor_qps, 3),
                    goal=FLOOR_GOAL,
                    passed=served_qps >= FLOOR_GOAL * floor_qps,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
