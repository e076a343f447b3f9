"""MiniLM tokens/s of the Ray Data embedding job against plain sentence-transformers ``encode`` on the same
chunks in the same run (goal: ratio >= 0.9, Ray must not cost throughput).

    python benchmarks/index_embed.py --chunks 4000            # the full measurement (CPU box)
    python benchmarks/index_embed.py --chunks 600 --leads 600 # a quick one

Plain: ``SentenceTransformer.encode(texts, batch_size)`` in this process with all CPUs. Ray: ``embed_corpus``
with one actor holding all CPUs (``num_cpus`` = CPU count, torch threads alike), units of ``--unit-rows``.
``ratio_wall`` counts the whole job after ``ray.init`` (actor start and model load included);
``ratio_steady`` only the time inside the actors' embedding calls. Tokens are MiniLM tokens (max 256).
Rounds alternate plain and Ray; each side's best round counts (the dev box is shared and noisy). Ray
workers run at nice 0 here (``RAY_worker_niceness=0``; Ray's default is 15), as the plain side does, so
other users' processes on a shared machine take CPU from both sides alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from index_common import REPO, chunk_texts, emit, json_stdout, load_leads, synthetic_corpus


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=4000)
    parser.add_argument("--leads", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--unit-rows", type=int, default=1000)
    parser.add_argument(
        "--rounds", type=int, default=2, help="interleaved plain/Ray rounds; the best of each counts"
    )
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "results" / "work")
    args = parser.parse_args()
    json_stdout()
    import torch
    from transformers import AutoTokenizer

    from sws.index import SentenceTransformerEmbedder, embed_corpus
    from sws.index.embedders import packaged_minilm_dir
    from sws.raykit import init_ray

    cpus = len(os.sched_getaffinity(0))
    corpus = args.work / f"embed-corpus-{args.chunks}"
    shutil.rmtree(corpus, ignore_errors=True)
    synthetic_corpus(corpus, load_leads(args.leads), args.chunks)
    texts = chunk_texts(corpus)
    tokenizer = AutoTokenizer.from_pretrained(packaged_minilm_dir())
    tokens = sum(min(len(ids), 256) for ids in tokenizer(texts)["input_ids"])

    torch.set_num_threads(cpus)
    os.environ["RAY_worker_niceness"] = (
        "0"  # Ray runs workers at nice 15: on a shared box they would lose CPU
    )
    embedder = SentenceTransformerEmbedder(device="cpu", batch_size=args.batch_size)
    embedder.embed_documents(texts[:64])  # warm up
    init_ray(num_cpus=cpus)
    plain, ray_wall, ray_steady = [], [], []
    for i in range(args.rounds):  # interleaved, so load from other processes hits both sides alike
        started = time.perf_counter()
        embedder.embed_documents(texts)
        plain.append(time.perf_counter() - started)
        out = args.work / f"embed-vectors-{args.chunks}-{i}"
        shutil.rmtree(out, ignore_errors=True)
        started = time.perf_counter()
        vectors = embed_corpus(
            corpus,
            out,
            embedder.spec() | {"batch_size": args.batch_size, "device": "cpu"},
            workers=1,
            num_cpus=cpus,
            threads=cpus,
            rows_per_unit=args.unit_rows,
        )
        ray_wall.append(time.perf_counter() - started)
        ray_steady.append(vectors.manifest["embed_seconds"])
    import ray

    ray.shutdown()
    plain_s, wall_s, steady_s = min(plain), min(ray_wall), min(ray_steady)
    emit(
        "embed_throughput",
        "minilm_tokens_per_s",
        chunks=len(texts),
        tokens=tokens,
        cpus=cpus,
        batch_size=args.batch_size,
        unit_rows=args.unit_rows,
        rounds=args.rounds,
        plain=round(tokens / plain_s, 1),
        ray_wall=round(tokens / wall_s, 1),
        ray_steady=round(tokens / steady_s, 1),
        ratio_wall=round(plain_s / wall_s, 3),
        ratio_steady=round(plain_s / steady_s, 3),
        plain_s=[round(x, 2) for x in plain],
        ray_wall_s=[round(x, 2) for x in ray_wall],
        ray_steady_s=[round(x, 2) for x in ray_steady],
    )


if __name__ == "__main__":
    main()
