"""Queries embedded as the paper embeds them, on this CPU (issue 45 §2): `sws serve`'s query path with
Qwen3-Embedding-0.6B's architecture against the in-process floor and against sentence-transformers float32
(what a user runs without sws) side by side in one run, and the float32 / bf16 / int8 query embedders through
the agreement gate.

The model is random-weight of the real shape (``qwen3_queries.model_dir``: 28 layers, width 1024, the real
tokenizer; ``--quick``: 2 layers of width 256, a smoke check): its speed is the real model's, its cosines say
nothing about the real weights. Questions of the six QA sets throughout: ``--queries`` of them are the
queries (with the reference's instruction), ``--index-texts`` others the recall index (their float32 document
vectors, cached and resumable under ``benchmarks/results/work``). JSON lines:

- ``startup``: cores, whether the CPU has bf16 units (AMX / AVX-512 BF16; without them bf16 runs emulated, and
  its speed here is not a bf16 CPU's), the model shape.
- ``index``: the recall index's vectors (count, seconds embedding them now; 0 when cached).
- ``variant`` per query embedder (float32, bf16 weights, int8 dynamic): ms per query at batch 32 on every core,
  ``gate_min_cosine`` on the agreement gate's probe texts (``sws.index.embedders.precision``: >= 0.999 to be
  admitted), the least cosine to float32 over the queries, recall@10 of exact search over the index against
  float32's, ``passes`` (both >= 0.999 and >= 0.99).
- ``round`` per repeat, alternating: sentence-transformers ``encode`` (float32, batch 32, every core), the
  floor (``floor.floor_round``: batches of 32 embedded by the served runtime, then searched with their
  vectors), and `sws serve` (``serve.embedding.runtime`` = ``--runtime``) under ``--clients`` closed-loop
  ``POST /search`` vector clients, over 480 short chunks of real text indexed by the model (``qwen3_index``).
- ``summary``: medians, ``ratio`` = served / sentence-transformers QPS (goal >= 3) with the served runtime's
  gate figures, ``ratio_to_floor``; exit 1 when the ratio or the quality goal fails.
- ``load`` (``--sweep-clients``): QPS and p50 / p99 per method and client count, QPS per core.

Run: ``timeout 14400 .venv/bin/python benchmarks/serve_qwen3_cpu.py`` (the first run embeds 20k questions
and the 480 served chunks in float32: ~2 h on 2 cores without bf16 units, resumable; then ~30 min);
``--quick``: the tiny model, 2k index texts (~5 min).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
from floor import floor_round
from loadgen import load
from qwen3_queries import (
    QUERY_PROMPT,
    VARIANTS,
    doc_vectors,
    model_dir,
    recall_at_10,
    sentence_transformer,
    split_questions,
    st_round,
    top10,
    variant,
)
from serve_common import WORK, agent_queries, emit, json_stdout
from serve_load import TOKEN

from serve.launch import ServeProcess
from sws.index.embedders.precision import MIN_COSINE  # the agreement gate's

GOAL = 3.0  # served QPS / sentence-transformers float32 QPS
MIN_RECALL = 0.99  # recall@10 of a variant's rankings against float32's
BATCH = 32  # the QueryEmbedder's max_batch_size and sentence-transformers' default


def qwen3_index(chunks: int, chunk_bytes: int, model: Path | None = None) -> Path:
    """A corpus of ``chunks`` short chunks (``index_common.synthetic_corpus``: real Wikipedia leads
    recombined, ``chunk_bytes`` each, ~60 tokens at 256, so the CPU build takes minutes) indexed with the model
    (``WORK``, made once; bf16 where this CPU has bf16 units). The embedder keeps ``max_length`` 512, which the
    served queries inherit from the manifest (a shorter one would cut Qwen3's ~20-token instruction)."""
    from index_common import load_leads, synthetic_corpus

    from sws.index import build_index
    from sws.index.embedders import Qwen3Embedder

    model = model or model_dir(tiny=False)
    shape = model.name.removeprefix("qwen3-embedding-")
    root = WORK / f"qwen3-{shape}-served-{chunks}x{chunk_bytes}"
    corpus, out = root / "corpus", root / "index"
    if not (out / "manifest.json").is_file():
        if not (corpus / "manifest.json").is_file():
            synthetic_corpus(corpus, load_leads(), chunks, chunk_bytes)
        embedder = Qwen3Embedder(str(model), device="cpu", max_length=512, runtime="auto")
        build_index(corpus, out, embedder=embedder, embed_options={"workers": 0})
    return out


def variants(
    model: Path, queries: list[str], index_texts: list[str], args: argparse.Namespace
) -> tuple[dict[str, dict], Any]:
    """One ``variant`` line per query embedder; returns them by name, and the float32 query vectors. bf16 on
    a CPU without bf16 units runs emulated (3-12x float32's time measured on 2 cores): it embeds the first
    ``args.emulated_queries`` queries only, and its line says so."""
    from sws.index.embedders.precision import PROBE_TEXTS, cpu_has_bf16, min_cosine

    fp32 = variant(model, "torch")
    cache = WORK / f"{model.name}-questions-fp32" / f"{len(index_texts)}"
    index, seconds = doc_vectors(fp32, index_texts, cache)
    emit("serve_qwen3_cpu", "index", vectors=len(index), dim=int(index.shape[1]), seconds=round(seconds, 1))
    probe_ref = fp32.embed_documents(list(PROBE_TEXTS))
    reference = expected = None
    out = {}
    for name in VARIANTS:
        emulated = name == "torch-bf16" and not cpu_has_bf16()  # its speed is then not a bf16 CPU's
        asked = queries[: args.emulated_queries] if emulated else queries
        embedder = fp32 if name == "torch" else variant(model, name)
        embedder.embed_queries(asked[:8])  # warm: first shapes
        started = time.perf_counter()
        vectors = embedder.embed_queries(asked)
        ms = (time.perf_counter() - started) / len(asked) * 1000
        if reference is None:
            reference, expected = vectors, top10(index, vectors)
        out[name] = {
            "variant": name,
            "ms_per_query": round(ms, 1),
            "speedup": round(out["torch"]["ms_per_query"] / ms, 2) if out else 1.0,
            "gate_min_cosine": round(min_cosine(embedder.embed_documents(list(PROBE_TEXTS)), probe_ref), 6),
            "min_cosine_queries": round(min_cosine(vectors, reference[: len(asked)]), 6),
            "recall_at_10": round(recall_at_10(top10(index, vectors), expected[: len(asked)]), 4),
            "index_vectors": len(index),
        }
        out[name]["passes"] = (
            min(out[name]["gate_min_cosine"], out[name]["min_cosine_queries"]) >= MIN_COSINE
            and out[name]["recall_at_10"] >= MIN_RECALL
        )
        emit(
            "serve_qwen3_cpu",
            "variant",
            **out[name],
            emulated=emulated,
            queries=len(asked),
            batch=BATCH,
            tiny=args.quick,
        )
        del embedder
    return out, reference


def side_by_side(
    index: Path, model: Path, queries: list[str], reference: Any, args: argparse.Namespace
) -> tuple[list[dict], dict]:
    """Alternating rounds of sentence-transformers, the floor and `sws serve`; one ``round`` line each. Returns
    the rounds and the served query embedder as ``/info`` describes it."""
    from serve.retrieval.embedding import open_query_embedder
    from sws.index import WikiIndex
    from sws.index.embedders.precision import min_cosine
    from sws.search import SearchEngine

    st = sentence_transformer(model)
    same = st.encode(queries[:BATCH], prompt=QUERY_PROMPT, batch_size=BATCH, normalize_embeddings=True)
    emit(  # the baseline computes what sws computes: same model, same texts
        "serve_qwen3_cpu",
        "baseline",
        kind="sentence-transformers",
        min_cosine_to_sws_fp32=round(min_cosine(same, reference[:BATCH]), 6),
        queries=BATCH,
    )
    engine = SearchEngine(WikiIndex.open(index, embedder=open_query_embedder(index, "cpu", args.runtime)))
    cores = os.cpu_count() or 1
    requests = [("/search", {"query": q, "top_k": 10, "method": "vector"}) for q in queries]
    rounds = []
    serve_args = [f"serve.embedding.runtime={args.runtime}"]
    with ServeProcess(index, token=TOKEN, args=serve_args, log_path=str(index) + "-serve.log") as server:
        headers = {"authorization": f"Bearer {TOKEN}"}
        info = httpx.get(f"{server.url}/info", headers=headers, trust_env=False).json()
        emit("serve_qwen3_cpu", "served_embedder", **info["query_embedding"])
        load(server.url, requests, clients=args.clients, seconds=args.warmup, token=TOKEN)
        for repeat in range(args.repeats):
            st_qps = st_round(st, queries, BATCH, args.seconds)
            floor = floor_round(engine, queries, "vector", BATCH, cores, args.seconds)
            served = load(
                server.url, requests, clients=args.clients, seconds=args.seconds, token=TOKEN
            ).summary()
            rounds.append(
                {"repeat": repeat, "sentence_transformers": st_qps, "floor": floor, "served": served}
            )
            emit("serve_qwen3_cpu", "round", **rounds[-1])
        if args.sweep_clients:
            sweep(server, args)
    return rounds, info["query_embedding"]


def sweep(server: ServeProcess, args: argparse.Namespace) -> None:
    """QPS per method and client count (the table of ``benchmarks/README.md`` "Qwen3 on CPU replicas")."""
    cores = os.cpu_count() or 1
    queries = agent_queries("questions", 2048)
    for method in ("vector", "rrf"):
        requests = [("/search", {"query": q, "top_k": 5, "method": method}) for q in queries]
        for clients in args.sweep_clients:
            load(server.url, requests, clients=clients, seconds=args.warmup, token=TOKEN)
            summary = load(server.url, requests, clients=clients, seconds=args.seconds, token=TOKEN).summary()
            emit(
                "serve_qwen3_cpu",
                "load",
                method=method,
                **summary,
                qps_per_core=round(summary["qps"] / cores, 2),
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the tiny model, short rounds (smoke check)")
    parser.add_argument("--runtime", default="auto", help="serve.embedding.runtime (auto, torch, torch-bf16)")
    parser.add_argument("--queries", type=int, default=512, help="questions asked (at most 750)")
    parser.add_argument("--index-texts", type=int, default=20_000, help="questions in the recall index")
    parser.add_argument(
        "--emulated-queries", type=int, default=64, help="queries bf16 embeds where it runs emulated"
    )
    parser.add_argument("--chunks", type=int, default=480, help="chunks of the served index")
    parser.add_argument("--chunk-bytes", type=int, default=256, help="bytes per served chunk (~60 tokens)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0, help="per round")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sweep-clients", type=int, nargs="*", default=[16, 256], help="none: no sweep")
    args = parser.parse_args()
    if args.quick:
        args.queries, args.index_texts, args.seconds, args.repeats = 64, 2000, 5.0, 1
        args.sweep_clients = []
    json_stdout()
    import torch

    from sws.index.embedders.precision import cpu_has_bf16

    cores = os.cpu_count() or 1
    torch.set_num_threads(cores)
    model = model_dir(tiny=args.quick)
    config = json.loads((model / "config.json").read_text())
    bf16 = cpu_has_bf16()
    emit(
        "serve_qwen3_cpu",
        "startup",
        cores=cores,
        cpu_bf16_units=bf16,
        bf16_note=None
        if bf16
        else "no AMX / AVX-512 BF16 here: bf16 runs emulated, its speed is not a bf16 CPU's",
        model=str(model),
        shape={k: config[k] for k in ("num_hidden_layers", "hidden_size", "intermediate_size")},
        quick=args.quick,
    )
    queries, index_texts = split_questions(args.queries, args.index_texts)
    quality, reference = variants(model, queries, index_texts, args)
    index = qwen3_index(args.chunks, args.chunk_bytes, model)
    rounds, served_embedder = side_by_side(index, model, queries, reference, args)
    st_qps = statistics.median(r["sentence_transformers"]["qps"] for r in rounds)
    floor_qps = statistics.median(r["floor"]["qps"] for r in rounds)
    served_qps = statistics.median(r["served"]["qps"] for r in rounds)
    gate = quality.get(served_embedder["runtime"], {})
    ratio = round(served_qps / st_qps, 3)
    quality_ok = bool(gate.get("passes"))
    emit(
        "serve_qwen3_cpu",
        "summary",
        method="vector",
        clients=args.clients,
        baseline="sentence-transformers float32 encode, batch 32, every core, same process kind and questions",
        sentence_transformers_qps=st_qps,
        floor_qps=floor_qps,
        served_qps=served_qps,
        served_failed=sum(r["served"]["failed"] for r in rounds),
        served_runtime=served_embedder["runtime"],
        served_quality=gate,
        ratio=ratio,
        goal=GOAL,
        ratio_to_floor=round(served_qps / floor_qps, 3),
        cpu_bf16_units=bf16,
        best_variant_passing=max(
            (q for q in quality.values() if q["passes"]), key=lambda q: q["speedup"], default=None
        ),
        passed=ratio >= GOAL and quality_ok,
    )
    return 0 if ratio >= GOAL and quality_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
