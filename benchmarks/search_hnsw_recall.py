"""HNSW recall@10 against exact inner-product search on the same vectors, with latency, per efSearch
(and per M): the numbers behind the ``DenseIndexConfig`` defaults (M=32, efConstruction=200, efSearch=128).

    python benchmarks/search_hnsw_recall.py --chunks 100000
    python benchmarks/search_hnsw_recall.py --chunks 20000 --leads 2000 --queries 300

Queries are real (AOL queries and QA questions) embedded with MiniLM; documents are the benchmark corpus
vectors (see index_common.py). Ground truth: ``IndexFlatIP`` on the float32 vectors; the HNSW stores
fp16, so recall includes the quantisation. Latency is single-threaded per query; ``ratio`` = HNSW p50 / exact p50.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from index_common import REPO, emit, json_stdout, load_queries, minilm, percentiles, prepare


def per_query(index, queries: np.ndarray, k: int, params=None) -> tuple[np.ndarray, list[float]]:
    rows, seconds = [], []
    for q in queries:
        started = time.perf_counter()
        _, found = index.search(q.reshape(1, -1), k, params=params)
        seconds.append(time.perf_counter() - started)
        rows.append(found[0])
    return np.array(rows), seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--leads", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--m", type=int, nargs="+", default=[16, 32, 48])
    parser.add_argument("--ef-construction", type=int, default=200)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "results" / "work")
    args = parser.parse_args()
    json_stdout()
    import faiss

    embedder = minilm()
    _, vectors = prepare(args.work, args.chunks, args.leads, embedder, chunk_bytes=0)
    sets = load_queries()
    texts = [q for pair in zip(sets["aol"], sets["questions"]) for q in pair][: args.queries]
    queries = embedder.embed_queries(texts)
    faiss.omp_set_num_threads(1)
    exact = faiss.IndexFlatIP(vectors.shape[1])
    exact.add(vectors)
    truth, exact_t = per_query(exact, queries, 10)
    exact_p = percentiles(exact_t)
    emit("hnsw_recall", "exact", chunks=len(vectors), queries=len(queries), **exact_p)
    for m in args.m:
        faiss.omp_set_num_threads(0)
        index = faiss.IndexHNSWSQ(
            vectors.shape[1], faiss.ScalarQuantizer.QT_fp16, m, faiss.METRIC_INNER_PRODUCT
        )
        index.hnsw.efConstruction = args.ef_construction
        started = time.perf_counter()
        index.add(vectors)
        build_s = time.perf_counter() - started
        faiss.omp_set_num_threads(1)
        for ef in args.ef_search:
            found, seconds = per_query(index, queries, 10, faiss.SearchParametersHNSW(efSearch=ef))
            recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth)])
            p = percentiles(seconds)
            emit(
                "hnsw_recall",
                f"m{m}_ef{ef}",
                chunks=len(vectors),
                queries=len(queries),
                m=m,
                ef_construction=args.ef_construction,
                ef_search=ef,
                build_s=round(build_s, 2),
                recall_at_10=round(float(recall), 4),
                **p,
                ratio=round(p["p50_ms"] / exact_p["p50_ms"], 4),
            )


if __name__ == "__main__":
    main()
