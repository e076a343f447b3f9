"""The paper's Qwen3 index served from CPU replicas: `sws serve` with CPU query embedding (``runtime: auto``) over
an index built with a Qwen3-Embedding-0.6B-shaped model, closed-loop ``POST /search`` clients on the six QA
sets' questions, vector and rrf at 16 and 256 clients: QPS, p50/p99, and QPS per core of this machine.

The model is random-weight of the real shape (``embed_qwen3_gpu.random_qwen3``: the real model's compute
per query, no download); the bundled sample's chunks are embedded truncated to ``--doc-tokens`` (64) so that
the CPU build takes minutes (queries are ~30 tokens with Qwen3's instruction, well below it). Rankings are
noise: this measures serving cost, not retrieval quality.

Run: ``timeout 1800 .venv/bin/python benchmarks/serve_qwen3_cpu.py`` (~8 min).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import httpx
from embed_qwen3_gpu import random_qwen3
from loadgen import load
from serve_common import WORK, agent_queries, emit, json_stdout, sample_index
from serve_load import TOKEN

from serve.launch import ServeProcess


def qwen3_index(doc_tokens: int) -> Path:
    """The sample corpus indexed with the model (``WORK``, made once; bf16 where this CPU has bf16 units)."""
    from sws.index import build_index
    from sws.index.embedders import Qwen3Embedder

    model = WORK / "qwen3-embedding-0.6b-shape"
    if not (model / "config.json").is_file():
        random_qwen3(model, tiny=False)
    out = WORK / f"qwen3-0.6b-shape-index-{doc_tokens}"
    if not (out / "manifest.json").is_file():
        embedder = Qwen3Embedder(str(model), device="cpu", max_length=doc_tokens, runtime="auto")
        build_index(sample_index().parent / "corpus", out, embedder=embedder, embed_options={"workers": 0})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc-tokens", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 256])
    args = parser.parse_args()
    json_stdout()
    cores = os.cpu_count() or 1
    index = qwen3_index(args.doc_tokens)
    queries = agent_queries("questions", 2048)
    with ServeProcess(index, token=TOKEN, log_path=str(index) + "-serve.log") as server:
        headers = {"authorization": f"Bearer {TOKEN}"}
        info = httpx.get(f"{server.url}/info", headers=headers, trust_env=False).json()
        emit("serve_qwen3_cpu", "startup", cores=cores, query_embedding=info["query_embedding"])
        for method in ("vector", "rrf"):
            requests = [("/search", {"query": q, "top_k": 5, "method": method}) for q in queries]
            for clients in args.clients:
                load(server.url, requests, clients=clients, seconds=args.warmup, token=TOKEN)
                summary = load(
                    server.url, requests, clients=clients, seconds=args.seconds, token=TOKEN
                ).summary()
                emit(
                    "serve_qwen3_cpu",
                    "load",
                    method=method,
                    **summary,
                    qps_per_core=round(summary["qps"] / cores, 2),
                    runtime=info["query_embedding"]["runtime"],
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
