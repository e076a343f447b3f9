"""From the slopes measured by ``scale_index.py`` at two sizes to full enwiki (10.8M chunks x 1024-d).

    python benchmarks/scale_projection.py RESULTS.jsonl     # README "Full scale" figures from a run's summary

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


def main() -> int:
    """Print the README rows from the ``summary`` line of a ``scale_index.py`` output."""
    with open(sys.argv[1], encoding="utf-8") as lines:
        for record in map(json.loads, lines):
            if record.get("measurement") == "summary" and "projection" in record:
                print(readme_rows(record["projection"]))
                return 0
    print(f"{sys.argv[1]}: no summary with a projection (run scale_index.py with two sizes)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
