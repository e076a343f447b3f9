"""QPS and p50/p99 latency of the tools over HTTP (``sws serve``) next to the in-process engine, same run.

For each method (keywords, vector, rrf searches; open_url) and each client count (default 1, 16, 64, 256):
first the in-process engine (``WikiTools.call_tool`` from that many threads), then the served app
(``POST /call`` from that many aiohttp clients). One JSON line per measurement with ``ratio`` = served QPS /
in-process QPS (goal: >= 0.8 at 16 clients); the in-process baseline runs torch with ``--torch-threads``
(1, like the served ``QueryEmbedder``). The server is ``sws serve`` in a child process with its own
local Ray (HAProxy ingress, 1 retrieval replica, batched query embeddings unless ``--no-batching``); the
load generator shares the machine.

Run: ``timeout 3000 .venv/bin/python benchmarks/serve_http.py --seconds 15`` (the issue's figure is 60 s).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from serve_common import METHODS, emit, http_requests, inprocess_load, json_stdout, sample_index, tool_calls

from serve.launch import ServeProcess
from serve.loadgen import load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--index", type=Path, help="index directory (default: the bundled sample, built if missing)"
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="per measurement (the issue asks 60)")
    parser.add_argument("--clients", default="1,16,64,256")
    parser.add_argument("--methods", default=",".join(METHODS))
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
    calls = tool_calls(index)

    baseline: dict[tuple[str, int], dict] = {}
    if not args.no_inprocess:
        from sws.env import WikiTools
        from sws.search import SearchEngine

        if args.torch_threads:
            import torch

            torch.set_num_threads(args.torch_threads)

        tools = WikiTools(SearchEngine.open(index))
        for method in methods:
            inprocess_load(tools, calls[method], 1, 1.0)  # warm up (model load, caches)
            for n in clients:
                baseline[method, n] = inprocess_load(tools, calls[method], n, args.seconds)
                emit(
                    "serve_http",
                    "inprocess",
                    method=method,
                    torch_threads=args.torch_threads or "default",
                    **baseline[method, n],
                )

    started = time.perf_counter()
    with ServeProcess(index, args=args.serve_arg, log_path=str(index) + "-serve.log") as server:
        emit(
            "serve_http",
            "startup",
            seconds=round(time.perf_counter() - started, 1),
            serve_args=args.serve_arg,
        )
        for method in methods:
            requests = http_requests(calls[method])
            load(server.url, requests, clients=4, seconds=1.0)  # warm up
            for n in clients:
                served = load(server.url, requests, clients=n, seconds=args.seconds).summary()
                base = baseline.get((method, n))
                ratio = round(served["qps"] / base["qps"], 3) if base else None
                emit(
                    "serve_http",
                    "served",
                    method=method,
                    **served,
                    inprocess_qps=base and base["qps"],
                    inprocess_p50_ms=base and base["p50_ms"],
                    inprocess_p99_ms=base and base["p99_ms"],
                    ratio=ratio,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
