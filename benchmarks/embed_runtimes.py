"""Query-embedding runtimes on this CPU, one thread: per model and runtime, ms per query at batch sizes 1, 16
and 64, the least cosine to the fp32 vectors on the six QA sets' questions and, for MiniLM, recall@10 of the
sample index's vector rankings against the fp32 ones; ``speedup`` is against the fp32 baseline measured in the
same run (MiniLM: ONNX Runtime, the previous serving default; Qwen3: torch float32). The last line per model
says which runtime ``auto`` picks here.

Qwen3 is a random-weight model of Qwen3-Embedding-0.6B's shape (28 layers, width 1024, the real tokenizer):
its speed is the real model's, its cosine says nothing about the real weights (the agreement gate checks those
at start, ``sws.index.embedders.precision``).

Run: ``timeout 1800 .venv/bin/python benchmarks/embed_runtimes.py`` (``--quick``: batch sizes 1 and 16, fewer
questions; ~4 min).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from embed_qwen3_gpu import random_qwen3
from serve_common import agent_queries, emit, json_stdout, sample_index


def ms_per_query(embedder, queries: list[str], batch: int, limit: int) -> float:
    texts = queries[: max(batch, limit // batch * batch)]
    embedder.embed_queries(texts[:batch])  # warm: first shapes
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        embedder.embed_queries(texts[i : i + batch])
    return round((time.perf_counter() - start) / len(texts) * 1000, 2)


def recall_at_10(index: Path, embedder, reference: np.ndarray, queries: list[str]) -> float:
    from sws.index import WikiIndex

    dense = WikiIndex.open(index, embedder=embedder).dense
    found = total = 0
    for fast, fp32 in zip(embedder.embed_queries(queries), reference, strict=True):
        expected = {row for row, _ in dense.search(fp32, 10)}
        found += len(expected & {row for row, _ in dense.search(fast, 10)})
        total += len(expected)
    return round(found / total, 4)


def measure(
    model: str, make, runtimes: list[str], queries: list[str], batches: list[int], index=None
) -> None:
    """One line per runtime (the first is the baseline), then the one ``auto`` picks."""
    reference = make("torch").embed_queries(queries)
    baseline = None
    for runtime in runtimes:
        embedder = make(runtime)
        timings = {str(b): ms_per_query(embedder, queries, b, len(queries)) for b in batches}
        baseline = baseline or timings
        vectors = embedder.embed_queries(queries)
        fields = {
            "model": model,
            **embedder.runtime_info(),
            "ms_per_query": timings,
            "speedup": {b: round(baseline[b] / t, 2) for b, t in timings.items()},
            "min_cosine_six_sets": round(float((vectors * reference).sum(axis=1).min()), 6),
            "queries": len(queries),
        }
        if index is not None:
            fields["recall_at_10"] = recall_at_10(index, embedder, reference, queries)
        emit("embed_runtimes", "runtime", **fields)
    emit("embed_runtimes", "auto", model=model, picks=make("auto").runtime_info())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch sizes 1 and 16, fewer questions")
    args = parser.parse_args()
    json_stdout()
    import torch

    from sws.index.embedders import Qwen3Embedder, SentenceTransformerEmbedder

    torch.set_num_threads(1)
    batches = [1, 16] if args.quick else [1, 16, 64]
    queries = agent_queries("questions", 192 if args.quick else 384)
    emit("embed_runtimes", "startup", batches=batches, threads=1, quick=args.quick)
    measure(
        "all-MiniLM-L6-v2",
        lambda runtime: SentenceTransformerEmbedder(device="cpu", runtime=runtime),
        ["onnx", "openvino", "torch"],
        queries,
        batches,
        index=sample_index(),
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = str(random_qwen3(Path(tmp), tiny=False))
        measure(
            "qwen3-embedding-0.6b-shape (random weights)",
            lambda runtime: Qwen3Embedder(path, device="cpu", max_length=512, runtime=runtime),
            ["torch", "torch-bf16"],
            queries[: 32 if args.quick else 64],
            batches[:2],
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
