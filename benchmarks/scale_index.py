"""The index at scale: build, disk, open, memory, search latency and served QPS at 100k and 1M chunks.

    python benchmarks/scale_index.py --chunks 100000 1000000 --shards 4 --out DIR   # the measurement
    python benchmarks/scale_index.py --quick --out DIR                             # 20k chunks, short

Corpus: ``index_common.synthetic_corpus`` (real lead sentences recombined, 6300 bytes = 1536 tokens per
chunk), written part by part. Vectors: ``HashingEmbedder`` (``sws/index/embedders/hashing.py``), a fast
deterministic bag-of-words embedder for scale runs only, since MiniLM cannot embed 1.5B tokens on 2 cores;
its recall@10 is measured against exact search over the same stored vectors. Everything else is the
production path: ``embed_corpus`` + ``build_index`` with Tantivy and ``--shards`` FAISS HNSW shards from the
index config, ``WikiIndex.open`` (memory-mapped codes, chunk-id check), ``SearchEngine``, ``WikiTools`` and
``sws serve --replicas 2`` (both replicas map the same shard files).

Per size, one JSON line per measurement: ``stage`` (wall time, peak RSS and peak anonymous RSS of corpus, embed, tantivy, faiss,
each in a fresh child process or reset per step), ``disk`` (bytes per component), ``open`` (cold: after
dropping the page cache, or the first open in a fresh process where that is not allowed; warm; the
replica's RSS after open against the HNSW graph bytes), ``latency`` (p50/p99 per method for short keyword
queries and for questions), ``recall``, ``served`` (QPS at 16 and 256 clients). Then ``summary`` with the
sizes side by side, ``rrf_p99_ratio`` (largest / smallest size; goal <= 1.5) and the projection to
10.8M chunks x 1024-d (``scale_projection.py``). Exits 1 when a goal fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from index_build import dir_bytes
from index_common import REPO, emit, json_stdout
from scale_projection import project
from scale_stages import (
    build,
    drop_page_cache,
    in_child,
    latency,
    make_corpus,
    open_index,
    open_urls,
    queries,
    replica_memory,
)

from sws.index.dense.searcher import read_chunk_ids

GB = 1e9
RRF_GROWTH_GOAL = 1.5
REPLICA_OVERHEAD_GOAL = 0.5 * GB  # RSS after open beyond the HNSW graph
STAGE_GROWTH_GOAL = 0.25  # peak anonymous RSS growth per byte of corpus text growth (holding the text: >= 1)
STAGE_GROWTH_FROM = 100_000  # below, one 20k-row corpus part or vector unit is a large share of the corpus


def text_bytes(corpus: Path) -> int:
    """Uncompressed bytes of the chunks' ``text`` column, from the Parquet metadata."""
    total = 0
    for part in sorted((corpus / "chunks").glob("part-*.parquet")):
        meta = pq.ParquetFile(part).metadata
        column = meta.schema.names.index("text")
        total += sum(
            meta.row_group(g).column(column).total_uncompressed_size for g in range(meta.num_row_groups)
        )
    return total


def disk(corpus: Path, index: Path, manifest: dict[str, Any]) -> dict[str, int]:
    faiss_dir = index / "faiss"
    shards = sum((faiss_dir / s["file"]).stat().st_size for s in manifest["dense"]["shards"])
    n, dim = manifest["corpus"]["chunks"], manifest["embedder"]["dim"]
    return {
        "corpus_chunks_parquet": dir_bytes(corpus / "chunks"),
        "corpus_text": text_bytes(corpus),
        "vectors_fp16": dir_bytes(index / "vectors"),
        "tantivy_chunks": dir_bytes(index / "tantivy" / "chunks"),
        "tantivy_titles": dir_bytes(index / "tantivy" / "titles"),
        "tantivy_redirects": dir_bytes(index / "tantivy" / "redirects"),
        "faiss_shards": shards,
        "faiss_codes": n * dim * 2,
        "faiss_graph": shards - n * dim * 2,  # the part a replica reads into memory
        "chunk_ids": (faiss_dir / "chunk_ids.arrow").stat().st_size,
    }


def served(index: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """QPS and latency of ``sws serve --replicas 2`` per method and client count, and the replicas' RSS."""
    from loadgen import load
    from serve_common import http_requests

    from serve.launch import ServeProcess

    sets = queries(args.queries)
    texts = [q for pair in zip(sets["keyword"], sets["question"]) for q in pair]
    calls = {
        m: [("search", json.dumps({"query": q, "top_k": 10, "method": m})) for q in texts]
        for m in ("keywords", "vector", "rrf")
    }
    urls = open_urls(read_chunk_ids(index / "faiss" / "chunk_ids.arrow"), args.queries)
    calls["open_url"] = [("open_url", json.dumps({"url": url})) for url in urls]
    out = []
    with ServeProcess(index, args=["--replicas", "2"], log_path=str(index) + "-serve.log") as server:
        for method in args.served_methods:
            requests = http_requests(calls[method])
            load(server.url, requests, clients=4, seconds=1.0)  # warm up
            for clients in args.clients:
                result = load(server.url, requests, clients=clients, seconds=args.seconds).summary()
                out.append({"method": method, **result, "replicas": replica_memory()})
    return out


def measure(n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement of one corpus size; emits them and returns the figures the summary compares."""
    root = args.out / f"chunks-{n}"
    corpus, index = root / "corpus", root / "index"
    fig: dict[str, Any] = {"chunks": n, "shards": args.shards, "dim": args.dim}
    if not (args.reuse and (index / "manifest.json").is_file()):
        shutil.rmtree(root, ignore_errors=True)
        stages = in_child(make_corpus, corpus, n, args.leads, args.chunk_bytes)
        stages |= in_child(build, corpus, index, args.shards, args.dim)["stages"]
        for name, record in stages.items():
            emit("scale", "stage", chunks=n, stage=name, **record)
        fig["stages"] = stages
    manifest = json.loads((index / "manifest.json").read_text())
    fig["shard_files"] = [s["file"] for s in manifest["dense"]["shards"]]
    fig["disk"] = disk(corpus, index, manifest)
    emit("scale", "disk", chunks=n, shards=len(fig["shard_files"]), **fig["disk"])
    dropped = drop_page_cache()
    cold, warm = in_child(open_index, index, args.dim), in_child(open_index, index, args.dim)
    overhead = warm["rss"] - fig["disk"]["faiss_graph"]
    fig["open"] = {"cold": cold, "warm": warm, "page_cache_dropped": dropped, "rss_beyond_graph": overhead}
    emit("scale", "open", chunks=n, **fig["open"], goal_rss_beyond_graph=REPLICA_OVERHEAD_GOAL)
    fig |= in_child(latency, index, args.dim, args.queries)
    for key, value in fig["latency"].items():
        emit("scale", "latency", chunks=n, method=key, **value, empty=fig["empty"][key])
    emit("scale", "recall", chunks=n, embedder="hashing", **fig["recall"])
    if args.served_methods:
        fig["served"] = served(index, args)
        for record in fig["served"]:
            emit("scale", "served", chunks=n, **record)
    return fig


def keyword_growth(small: dict[str, Any], big: dict[str, Any]) -> dict[str, float]:
    """p50 growth from the smallest to the largest size of BM25 top-1 and top-30 (the keywords method's fetch):
    equal growth, about the corpus growth, means every posting of every query term is scored (no pruning)."""
    return {
        f"{method}/{queries_set}": round(
            big["latency"][f"{method}/{queries_set}"]["p50_ms"]
            / max(small["latency"][f"{method}/{queries_set}"]["p50_ms"], 1e-6),
            2,
        )
        for method in ("keywords_top1", "keywords")
        for queries_set in ("keyword", "question")
    }


def goals(figs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each goal that the measured sizes can decide: its value and whether it passes."""
    out: dict[str, Any] = {}
    for fig in figs:
        over = fig["open"]["rss_beyond_graph"]
        out[f"replica_rss_beyond_graph_{fig['chunks']}"] = {
            "value": over,
            "ok": over <= REPLICA_OVERHEAD_GOAL,
        }
    small, big = figs[0], figs[-1]
    if big["chunks"] > small["chunks"]:
        for queries_set in ("keyword", "question"):
            key = f"rrf/{queries_set}"
            ratio = big["latency"][key]["p99_ms"] / small["latency"][key]["p99_ms"]
            out[f"rrf_p99_ratio_{queries_set}"] = {"value": round(ratio, 3), "ok": ratio <= RRF_GROWTH_GOAL}
        if "stages" in small and "stages" in big and small["chunks"] >= STAGE_GROWTH_FROM:
            growth = big["disk"]["corpus_text"] - small["disk"]["corpus_text"]
            for name, grown in big["stages"].items():  # anonymous memory: held, not the files it maps
                per_byte = (grown["peak_rss_anon"] - small["stages"][name]["peak_rss_anon"]) / growth
                out[f"peak_rss_growth_{name}"] = {
                    "value": round(per_byte, 4),
                    "ok": per_byte < STAGE_GROWTH_GOAL,
                }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument(
        "--shards", type=int, default=4, help="FAISS HNSW shards (shard_rows = chunks / shards)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "work" / "scale")
    parser.add_argument("--quick", action="store_true", help="20k chunks, 50 queries, 3 s per served point")
    parser.add_argument("--queries", type=int, default=500, help="per query set (keyword, question)")
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 256])
    parser.add_argument("--seconds", type=float, default=15.0, help="per served point")
    parser.add_argument(
        "--served-methods", nargs="*", default=["keywords", "vector", "rrf", "open_url"], help="none: skip"
    )
    parser.add_argument("--dim", type=int, default=384, help="hashing embedder dimension (MiniLM's)")
    parser.add_argument("--leads", type=int, default=None, help="real leads the corpus recombines (all)")
    parser.add_argument("--chunk-bytes", type=int, default=6300, help="text bytes per chunk (1536 tokens)")
    parser.add_argument("--reuse", action="store_true", help="keep a finished index of the same size")
    args = parser.parse_args()
    if args.quick:
        args.chunks, args.queries, args.seconds = [20_000], 50, 3.0
    json_stdout()
    figs = [measure(n, args) for n in sorted(args.chunks)]
    summary = {
        "sizes": {
            fig["chunks"]: {k: fig[k] for k in ("disk", "open", "latency", "recall") if k in fig}
            | {
                "stages": {
                    name: {k: r[k] for k in ("seconds", "peak_rss")}
                    for name, r in fig.get("stages", {}).items()
                }
            }
            for fig in figs
        },
        "goals": goals(figs),
        "keyword_growth": keyword_growth(figs[0], figs[-1]),
    }
    if len(figs) > 1 and all("stages" in fig for fig in figs):
        summary["projection"] = project(figs[0], figs[-1])
    emit("scale", "summary", **summary)
    return 0 if all(goal["ok"] for goal in summary["goals"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
