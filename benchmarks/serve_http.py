"""QPS and p50/p99 latency of the tools over HTTP (``sws serve``) next to the in-process engine, same run.

For each method (keywords, vector, rrf searches; open_url) and each client count (default 1, 16, 64, 256),
``--repeats`` (3) alternating rounds of the in-process engine (``WikiTools.call_tool`` from that many
threads) and the served app (``POST /call`` from that many aiohttp clients), with the server up throughout,
so both sides see the same machine. One JSON line per round, then a ``summary`` line with each side's median
QPS and latencies and ``ratio`` = served / in-process median QPS (goal: >= 0.8 at 16 clients). The in-process
baseline runs torch with ``--torch-threads`` (1, like the served ``QueryEmbedder``). The server is ``sws serve``
in a child process with its own local Ray (HAProxy ingress in Ray's high-throughput mode, 1 retrieval replica
unless ``--serve-arg=--replicas --serve-arg=N``, batched query embeddings unless ``--serve-arg=--no-batching``);
the load generator shares the machine.

Run: ``timeout 3600 .venv/bin/python benchmarks/serve_http.py --seconds 10`` (~25 min; the issue's figure is 60 s).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from loadgen import load
from serve_common import (
    METHODS,
    add_queries_flag,
    emit,
    http_requests,
    inprocess_load,
    json_stdout,
    sample_index,
    tool_calls,
)

from serve.launch import ServeProcess


def _summary(rounds: dict[str, list[dict]]) -> dict:
    """Median QPS and latencies of each side over the rounds, and ``ratio`` = served / in-process QPS."""
    out: dict = {"repeats": len(rounds["served"])}
    for side, runs in rounds.items():
        for key in ("qps", "p50_ms", "p99_ms"):
            if runs:
                out[f"{side}_{key}"] = statistics.median(run[key] for run in runs)
    out["served_failed"] = sum(run["failed"] for run in rounds["served"])
    if rounds["inprocess"]:
        out["ratio"] = round(out["served_qps"] / out["inprocess_qps"], 3)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--index", type=Path, help="index directory (default: the bundled sample, built if missing)"
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="per measurement (the issue asks 60)")
    parser.add_argument("--clients", default="1,16,64,256")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--repeats", type=int, default=3, help="alternating in-process/served rounds")
    add_queries_flag(parser)
    parser.add_argument("--no-inprocess", action="store_true", help="skip the in-process baseline")
    parser.add_argument("--serve-arg", action="append", default=[], help="extra `sws serve` argument")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch threads of the in-process baseline (0: torch's default, one per core); the served "
        "QueryEmbedder uses one per CPU it reserves (1), and two threads on a shared 2-core box stall",
    )
    args = parser.parse_args()
    json_stdout()
    index = sample_index() if not args.index else args.index
    clients = [int(c) for c in args.clients.split(",")]
    methods = args.methods.split(",")
    calls = tool_calls(index, queries=args.queries)
    tools = None
    if not args.no_inprocess:
        from sws.env import WikiTools
        from sws.search import SearchEngine

        if args.torch_threads:
            import torch

            torch.set_num_threads(args.torch_threads)
        tools = WikiTools(SearchEngine.open(index))

    started = time.perf_counter()
    with ServeProcess(index, args=args.serve_arg, log_path=str(index) + "-serve.log") as server:
        emit(
            "serve_http",
            "startup",
            seconds=round(time.perf_counter() - started, 1),
            serve_args=args.serve_arg,
            queries=args.queries,
        )
        for method in methods:
            requests = http_requests(calls[method])
            load(server.url, requests, clients=4, seconds=1.0)  # warm up (connections, caches)
            if tools is not None:
                inprocess_load(tools, calls[method], 1, 1.0)  # warm up (model load, caches)
            for n in clients:
                rounds: dict[str, list[dict]] = {"inprocess": [], "served": []}
                for _ in range(args.repeats):  # alternate, so both sides see the same machine
                    if tools is not None:
                        rounds["inprocess"].append(inprocess_load(tools, calls[method], n, args.seconds))
                        emit("serve_http", "inprocess", method=method, **rounds["inprocess"][-1])
                    rounds["served"].append(
                        load(server.url, requests, clients=n, seconds=args.seconds).summary()
                    )
                    emit("serve_http", "served", method=method, **rounds["served"][-1])
                summary = _summary(rounds)
                emit("serve_http", "summary", method=method, queries=args.queries, clients=n, **summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
