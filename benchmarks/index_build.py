"""Index build rates and sizes: Tantivy documents/s and FAISS vectors/s against the raw library calls on the
same data in the same run, bytes per chunk of each index, and the projection to 10.8M chunks x 1024-d.

    python benchmarks/index_build.py --chunks 100000          # the full measurement
    python benchmarks/index_build.py --chunks 20000 --leads 2000   # a quick one

Floors: ``tantivy_raw`` reads the same chunk Parquet and adds the same documents (same analyzer and fields,
no titles/redirects indexes) with a bare ``IndexWriter``; ``faiss_raw`` is one ``IndexHNSWSQ.add`` of the same
float32 array already in memory (ours reads the float16 vector shards).
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import numpy as np
import tantivy
from index_common import REPO, build_bench_index, chunk_texts, emit, json_stdout, minilm, prepare

from sws.index import CorpusFiles
from sws.index.keyword.analyzers import analyzer_name, make_analyzer
from sws.index.keyword.indexer import CHUNK_COLUMNS
from sws.index.keyword.schema import chunks_schema

ENWIKI_CHUNKS, ENWIKI_DIM = 10_837_506, 1024


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def tantivy_raw(corpus: Path, out: Path, threads: int, heap_mb: int) -> float:
    schema = chunks_schema("default")
    out.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(out))
    index.register_tokenizer(analyzer_name("default"), make_analyzer("default"))
    started = time.perf_counter()
    writer = index.writer(heap_size=heap_mb * 1_000_000, num_threads=threads)
    row = 0
    for batch in CorpusFiles.open(corpus).iter_chunks(CHUNK_COLUMNS):
        for rec in batch.to_pylist():
            writer.add_document(tantivy.Document(row=row, **rec))
            row += 1
    writer.commit()
    writer.wait_merging_threads()
    return time.perf_counter() - started


def faiss_raw(vectors: np.ndarray, m: int, ef_construction: int) -> float:
    import faiss

    index = faiss.IndexHNSWSQ(vectors.shape[1], faiss.ScalarQuantizer.QT_fp16, m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    started = time.perf_counter()
    index.add(vectors)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--leads", type=int, default=10_000, help="real leads the corpus recombines")
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--ef-construction", type=int, default=200)
    parser.add_argument(
        "--chunk-bytes",
        type=int,
        default=6300,
        help="text bytes per chunk (6300: a 1536-token chunk, ~4.1 bytes/token)",
    )
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "results" / "work")
    args = parser.parse_args()
    json_stdout()
    embedder = minilm()
    corpus, vectors = prepare(args.work, args.chunks, args.leads, embedder, args.chunk_bytes)
    name = f"index-build-{args.chunks}"
    shutil.rmtree(args.work / name, ignore_errors=True)
    out, manifest = build_bench_index(
        args.work, corpus, vectors, embedder, name, m=args.m, ef_construction=args.ef_construction
    )
    n, dim = manifest["corpus"]["chunks"], manifest["embedder"]["dim"]
    kw_s, dn_s = manifest["keyword"]["seconds"], manifest["dense"]["seconds"]
    raw_dir = args.work / f"{name}-tantivy-raw"
    shutil.rmtree(raw_dir, ignore_errors=True)
    raw_kw = tantivy_raw(corpus, raw_dir, threads=0, heap_mb=512)
    raw_dn = faiss_raw(vectors, args.m, args.ef_construction)
    emit(
        "index_build",
        "tantivy_docs_per_s",
        chunks=n,
        value=round(n / kw_s, 1),
        floor=round(n / raw_kw, 1),
        ratio=round(raw_kw / kw_s, 3),
        note="ours also writes the titles and redirects indexes",
    )
    emit(
        "index_build",
        "faiss_vectors_per_s",
        chunks=n,
        dim=dim,
        m=args.m,
        ef_construction=args.ef_construction,
        value=round(n / dn_s, 1),
        floor=round(n / raw_dn, 1),
        ratio=round(raw_dn / dn_s, 3),
    )
    sizes = {
        "tantivy_chunks": dir_bytes(out / "tantivy" / "chunks"),
        "tantivy_titles": dir_bytes(out / "tantivy" / "titles"),
        "tantivy_redirects": dir_bytes(out / "tantivy" / "redirects"),
        "faiss_shards": sum((out / "faiss" / s["file"]).stat().st_size for s in manifest["dense"]["shards"]),
        "chunk_ids": (out / "faiss" / "chunk_ids.arrow").stat().st_size,
        "vectors_fp16": dir_bytes(out / "vectors"),
    }
    text_bytes = sum(len(t.encode()) for t in chunk_texts(corpus))
    graph_per_vector = (sizes["faiss_shards"] - n * dim * 2) / n
    emit(
        "index_build",
        "bytes_per_chunk",
        chunks=n,
        dim=dim,
        text_bytes_per_chunk=round(text_bytes / n, 1),
        **{k: round(v / n, 1) for k, v in sizes.items()},
        hnsw_graph_bytes_per_vector=round(graph_per_vector, 1),
    )
    projected = {
        "tantivy_gb": (sizes["tantivy_chunks"] + sizes["tantivy_titles"])
        / text_bytes
        * 6300
        * ENWIKI_CHUNKS
        / 1e9,
        "faiss_gb": ENWIKI_CHUNKS * (ENWIKI_DIM * 2 + graph_per_vector) / 1e9,
        "chunk_ids_gb": sizes["chunk_ids"] / n * ENWIKI_CHUNKS / 1e9,
        "vectors_fp16_gb": ENWIKI_CHUNKS * ENWIKI_DIM * 2 / 1e9,
    }
    emit(
        "index_build",
        "projection_enwiki",
        chunks=ENWIKI_CHUNKS,
        dim=ENWIKI_DIM,
        m=args.m,
        **{k: round(v, 2) for k, v in projected.items()},
        note="FAISS: 2 bytes/dim + the measured HNSW graph bytes per vector; Tantivy: index bytes per text byte "
        "measured here times 6300 text bytes per chunk (1536 tokens); exact only with --chunk-bytes 6300",
    )


if __name__ == "__main__":
    main()
