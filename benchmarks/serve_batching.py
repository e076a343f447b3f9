"""Vector-search QPS over HTTP with and without query-embedding batching, same run.

Two ``sws serve`` runs on the same index: the default (a ``QueryEmbedder`` deployment batching concurrent
queries with ``@serve.batch``) and ``--no-batching`` (each retrieval replica embeds its own queries, one
forward pass per query, on a thread pool). One JSON line per (mode, clients) with QPS and p50/p99, and a
``ratio`` line (batched / unbatched QPS) per client count.

Run: ``timeout 1800 .venv/bin/python benchmarks/serve_batching.py --seconds 15``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from loadgen import load
from serve_common import add_queries_flag, emit, http_requests, json_stdout, sample_index, tool_calls

from serve.launch import ServeProcess


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", default="1,16,64")
    parser.add_argument("--method", default="vector", choices=["vector", "rrf"])
    add_queries_flag(parser)
    args = parser.parse_args()
    json_stdout()
    index = args.index or sample_index()
    requests = http_requests(tool_calls(index, queries=args.queries)[args.method])
    clients = [int(c) for c in args.clients.split(",")]
    qps: dict[tuple[str, int], float] = {}
    for mode, serve_args in (("batched", []), ("unbatched", ["--no-batching"])):
        with ServeProcess(index, args=serve_args, log_path=str(index) + "-serve.log") as server:
            load(server.url, requests, clients=4, seconds=2.0)  # warm up
            for n in clients:
                summary = load(server.url, requests, clients=n, seconds=args.seconds).summary()
                qps[mode, n] = summary["qps"]
                emit("serve_batching", mode, method=args.method, **summary)
    for n in clients:
        emit(
            "serve_batching",
            "ratio",
            method=args.method,
            queries=args.queries,
            clients=n,
            batched_qps=qps["batched", n],
            unbatched_qps=qps["unbatched", n],
            ratio=round(qps["batched", n] / max(qps["unbatched", n], 1e-9), 3),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
