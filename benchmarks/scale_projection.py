"""From the slopes measured by ``scale_index.py`` at two sizes to full enwiki (10.8M chunks x 1024-d).

    python benchmarks/scale_projection.py RESULTS.jsonl     # README "Full scale" figures from a run's summary
    python benchmarks/scale_projection.py --reference REF.jsonl [--scale RESULTS.jsonl] [--embed QWEN3.jsonl]
                                                            # the released index's row (reference_row)

Models, each fitted through the two measured sizes (n1 < n2):

- bytes on disk, build seconds, open seconds, replica RSS: linear, ``a + b * n``. The FAISS codes are exactly
  2 bytes per dimension (``faiss_codes``) and the graph is independent of the dimension, so FAISS and the
  fp16 vectors are recomputed at 1024-d; the FAISS build time is scaled by 1024 / measured dim (distance
  computations dominate HNSW inserts).
- search p99: a power law through both points, ``p2 * (N / n2) ** alpha`` with ``alpha = log(p2 / p1) /
  log(n2 / n1)``, at the measured dimension (the dense part of vector and rrf grows with the dimension).
- build peak RSS: corpus and Tantivy linear in their anonymous memory (Tantivy's is bounded by its writer
  heap; its memory-mapped segments are page cache); FAISS holds one shard
  at a time, so its growth per shard row, scaled by 1024 / measured dim (an upper bound: the graph does not
  grow with the dimension), is given for 1M-row shards (``index.dense.shard_rows``).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from index_build import ENWIKI_CHUNKS, ENWIKI_DIM

GB = 1e9


def linear(n1: float, y1: float, n2: float, y2: float, n: float) -> float:
    slope = (y2 - y1) / (n2 - n1)
    return y2 + slope * (n - n2)


def power(n1: float, y1: float, n2: float, y2: float, n: float) -> float:
    alpha = math.log(y2 / y1) / math.log(n2 / n1) if y1 > 0 and y2 > 0 else 1.0
    return y2 * (n / n2) ** alpha


def project(
    small: dict[str, Any], big: dict[str, Any], chunks: int = ENWIKI_CHUNKS, dim: int = ENWIKI_DIM
) -> dict:
    """The projection from two ``scale_index.measure`` results (sizes in GB, times in s, latencies in ms)."""
    n1, n2, d = small["chunks"], big["chunks"], big["dim"]

    def lin(get) -> float:
        return linear(n1, get(small), n2, get(big), chunks)

    disk = {
        key: lin(lambda f, key=key: f["disk"][key]) / GB
        for key in ("corpus_chunks_parquet", "tantivy_chunks", "tantivy_titles", "chunk_ids", "faiss_graph")
    }
    disk |= {
        "tantivy": disk["tantivy_chunks"] + disk["tantivy_titles"],
        "vectors_fp16": chunks * dim * 2 / GB,
        "faiss": chunks * dim * 2 / GB + disk["faiss_graph"],
    }
    build_s = {name: lin(lambda f, name=name: f["stages"][name]["seconds"]) for name in ("tantivy", "faiss")}
    build_s["faiss"] *= dim / d
    peak = {  # anonymous memory (Tantivy's RSS also counts the segments it maps while merging)
        name: lin(lambda f, name=name: f["stages"][name]["peak_rss_anon"]) / GB
        for name in ("corpus", "tantivy")
    }
    faiss = big["stages"]["faiss"]
    per_row = (faiss["peak_rss"] - faiss["rss_before"]) / math.ceil(n2 / big["shards"]) * dim / d
    peak["faiss_per_million_shard_rows"] = (faiss["rss_before"] + per_row * 1e6) / GB
    p99 = {
        key: power(n1, small["latency"][key]["p99_ms"], n2, big["latency"][key]["p99_ms"], chunks)
        for key in big["latency"]
    }
    return {
        "chunks": chunks,
        "dim": dim,
        "from": [n1, n2],
        "measured_dim": d,
        "disk_gb": {k: round(v, 2) for k, v in disk.items()},
        "build_seconds_one_node": {k: round(v) for k, v in build_s.items()},
        "build_peak_rss_gb": {k: round(v, 2) for k, v in peak.items()},
        "open_seconds": {
            side: round(lin(lambda f, side=side: f["open"][side]["seconds"]), 1) for side in ("cold", "warm")
        },
        "replica_rss_gb": round(lin(lambda f: f["open"]["warm"]["rss"]) / GB, 2),
        "p99_ms_at_measured_dim": {k: round(v, 1) for k, v in p99.items()},
    }


def reference_faiss(
    small: dict[str, Any], big: dict[str, Any], vectors: int = ENWIKI_CHUNKS
) -> dict[str, Any]:
    """The reference's ``IndexHNSWSQ`` fp16 file at ``vectors`` from two ``scale_reference_faiss.measure``
    results at its dimension: bytes, open seconds and replica RSS linear in n; warm search latency by the power
    law through both sizes (HNSW's is closer to log n, so this errs high), cold search latency as measured at
    the larger size (``cold_measured_at``); vector QPS per core = 1000 / the warm mean latency on one FAISS
    thread (the query vector given: no embedding)."""
    n1, n2 = small["vectors"], big["vectors"]

    def lin(get) -> float:
        return linear(n1, get(small), n2, get(big), vectors)

    warm = {
        key: round(power(n1, small["latency"]["warm"][key], n2, big["latency"]["warm"][key], vectors), 2)
        for key in ("p50_ms", "p99_ms", "mean_ms")
    }
    # cold searches wait on the disk's random reads, a few pages per hop: not a power of n; as measured at n2
    latency = {"warm": warm, "cold": {k: big["latency"]["cold"][k] for k in ("p50_ms", "p99_ms", "mean_ms")}}
    return {
        "vectors": vectors,
        "from": [n1, n2],
        "file_gb": round(lin(lambda f: f["file_bytes"]) / GB, 2),
        "graph_gb": round(lin(lambda f: f["graph_bytes"]) / GB, 2),
        "open_seconds": {
            "cold": round(lin(lambda f: f["open"]["cold_s"]), 1),
            "warm": round(lin(lambda f: f["open"]["warm_s"]), 1),
        },
        "replica_rss_after_open_gb": round(lin(lambda f: f["rss_after_open"]) / GB, 2),
        "replica_rss_anon_after_open_gb": round(lin(lambda f: f["rss_anon_after_open"]) / GB, 2),
        "latency_ms": latency,
        "cold_measured_at": n2,
        "vector_search_qps_per_core": round(1000 / latency["warm"]["mean_ms"], 1),
    }


def per_core(ms: float) -> float:
    """Queries per second of one core at ``ms`` per query."""
    return round(1000 / ms, 1) if ms > 0 else float("inf")


def reference_row(
    faiss: dict[str, Any], scale: dict[str, Any] | None = None, embed_qps_per_core: float | None = None
) -> dict[str, Any]:
    """The README "Full scale" row of the paper's released index (10.8M chunks): ``faiss`` is
    :func:`reference_faiss`; ``scale`` a ``scale_index.py`` summary with two sizes (``sizes``: Tantivy's
    keyword latency, sws's vector and rrf latency and their dense part) projects keywords by the power law
    of its mean latency, and vector / rrf as their non-dense part so projected plus the 1024-d FAISS search
    of ``faiss``; ``embed_qps_per_core`` (``serve_qwen3_cpu.py``'s in-process floor per core) adds the
    query embedding on the CPU. Questions, one core, in process."""
    out: dict[str, Any] = {"faiss": faiss}
    if scale:
        sizes = sorted((int(n), s) for n, s in scale["sizes"].items())
        (n1, s1), (n2, s2) = sizes[0], sizes[-1]
        n = faiss["vectors"]

        def mean(size: dict[str, Any], key: str) -> float:
            return size["latency"][key]["mean_ms"]

        def dense(size: dict[str, Any]) -> float:
            return size["recall"]["dense_search"]["mean_ms"]

        keywords = power(n1, mean(s1, "keywords/question"), n2, mean(s2, "keywords/question"), n)
        vector_rest = power(
            n1, mean(s1, "vector/question") - dense(s1), n2, mean(s2, "vector/question") - dense(s2), n
        )
        rrf_rest = power(
            n1, mean(s1, "rrf/question") - dense(s1), n2, mean(s2, "rrf/question") - dense(s2), n
        )
        vector = vector_rest + faiss["latency_ms"]["warm"]["mean_ms"]
        rrf = rrf_rest + faiss["latency_ms"]["warm"]["mean_ms"]
        out["mean_ms"] = {"keywords": round(keywords, 1), "vector": round(vector, 1), "rrf": round(rrf, 1)}
        out["qps_per_core"] = {key: per_core(ms) for key, ms in out["mean_ms"].items()}
        if embed_qps_per_core:
            embed_ms = 1000 / embed_qps_per_core
            out["qps_per_core_with_cpu_query_embedding"] = {
                "vector": per_core(vector + embed_ms),
                "rrf": per_core(rrf + embed_ms),
            }
    return out


def readme_rows(p: dict[str, Any]) -> str:
    """The "index" and "serve" rows of the README "Full scale" table."""
    disk, peak, t = p["disk_gb"], p["build_peak_rss_gb"], p["build_seconds_one_node"]
    lat = p["p99_ms_at_measured_dim"]
    src = f"projected from {p['from'][0]:,} and {p['from'][1]:,} chunks (`benchmarks/scale_index.py`)"
    index = (
        f"| index | fp16 vectors {disk['vectors_fp16']:.0f} GB, Tantivy {disk['tantivy']:.0f} GB, FAISS HNSW "
        f"{disk['faiss']:.0f} GB (graph {disk['faiss_graph']:.1f} GB), corpus chunks Parquet "
        f"{disk['corpus_chunks_parquet']:.0f} GB | peak anonymous RSS: Tantivy {peak['tantivy']:.1f} GB, FAISS "
        f"{peak['faiss_per_million_shard_rows']:.1f} GB per 1M-row shard | on one node: "
        f"Tantivy {t['tantivy'] / 60:.0f} min, FAISS {t['faiss'] / 3600:.1f} h on 2 cores; {src} |"
    )
    serve = (
        f"| serve | — | {p['replica_rss_gb']:.1f} GB RSS per retrieval replica after open (graph "
        f"{disk['faiss_graph']:.1f} GB); codes and Tantivy memory-mapped, shared through the page cache | open "
        f"{p['open_seconds']['cold']:.0f} s cold, {p['open_seconds']['warm']:.0f} s warm; p99 rrf "
        f"{lat['rrf/question']:.0f} ms (questions), {lat['rrf/keyword']:.0f} ms (keyword queries) at "
        f"{p['measured_dim']}-d; {src} |"
    )
    return index + "\n" + serve


def reference_readme_row(row: dict[str, Any]) -> str:
    """The README "Full scale" row of the paper's released index, from :func:`reference_row`."""
    f = row["faiss"]
    src = (
        f"projected from {f['from'][0]:,} and {f['from'][1]:,} vectors x 1024-d in the reference's form "
        "(`benchmarks/scale_reference_faiss.py`)"
    )
    qps = ""
    if "qps_per_core" in row:
        q = row["qps_per_core"]
        qps = (
            f"; QPS per core in process, questions, query vector given: keywords {q['keywords']:g}, vector "
            f"{q['vector']:g}, rrf {q['rrf']:g} (Tantivy from `scale_index.py`'s two sizes)"
        )
        if "qps_per_core_with_cpu_query_embedding" in row:
            e = row["qps_per_core_with_cpu_query_embedding"]
            qps += f"; with Qwen3 query embedding on the CPU: vector {e['vector']:g}, rrf {e['rrf']:g}"
    return (
        f"| released index (`sws index import`) | FAISS {f['file_gb']:.0f} GB (fp16 codes "
        f"{f['file_gb'] - f['graph_gb']:.0f} GB, graph {f['graph_gb']:.1f} GB); Tantivy as released | per "
        f"retrieval replica {f['replica_rss_after_open_gb']:.1f} GB RSS after open, of which "
        f"{f['replica_rss_anon_after_open_gb']:.2f} GB its own (the rest the graph's file pages, shared by the "
        f"node's replicas); warm search wants the {f['file_gb']:.0f} GB file in the page cache | open "
        f"{f['open_seconds']['cold']:.0f} s cold, {f['open_seconds']['warm']:.0f} s warm; FAISS p50 / p99 "
        f"{f['latency_ms']['warm']['p50_ms']:.1f} / {f['latency_ms']['warm']['p99_ms']:.1f} ms warm, "
        f"{f['latency_ms']['cold']['p50_ms']:.0f} / {f['latency_ms']['cold']['p99_ms']:.0f} ms cold at "
        f"{f['cold_measured_at']:,} (efSearch 64, top 10){qps}; {src} |"
    )


def _summary(path: str, benchmark: str) -> dict[str, Any] | None:
    with open(path, encoding="utf-8") as lines:
        for record in map(json.loads, lines):
            if record.get("benchmark") == benchmark and record.get("measurement") == "summary":
                return record
    return None


def main() -> int:
    """Print the README rows from the ``summary`` line of a ``scale_index.py`` output; with ``--reference``,
    the released index's row from ``scale_reference_faiss.py``'s (plus ``--scale``, a ``scale_index.py``
    output with two sizes, and ``--embed``, a ``serve_qwen3_cpu.py`` output)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", help="a scale_index.py output (the sws index's rows)")
    parser.add_argument("--reference", help="a scale_reference_faiss.py output (the released index's row)")
    parser.add_argument("--scale", help="with --reference: a scale_index.py output with two sizes")
    parser.add_argument("--embed", help="with --reference: a serve_qwen3_cpu.py output")
    args = parser.parse_args()
    if args.reference:
        faiss = _summary(args.reference, "scale_reference_faiss")
        if not faiss or "projection" not in faiss:
            print(f"{args.reference}: no summary with a projection (run with --probe)", file=sys.stderr)
            return 1
        scale = _summary(args.scale, "scale") if args.scale else None
        embed = _summary(args.embed, "serve_qwen3_cpu") if args.embed else None
        embed_qps = embed["floor_qps"] / embed["machine"]["cpus_usable"] if embed else None
        print(reference_readme_row(reference_row(faiss["projection"], scale, embed_qps)))
        return 0
    if not args.results:
        parser.error("give a scale_index.py output, or --reference")
    with open(args.results, encoding="utf-8") as lines:
        for record in map(json.loads, lines):
            if record.get("measurement") == "summary" and "projection" in record:
                print(readme_rows(record["projection"]))
                return 0
    print(
        f"{args.results}: no summary with a projection (run scale_index.py with two sizes)", file=sys.stderr
    )
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
