"""In-process search latency p50/p99 per method, beside the raw Tantivy and FAISS calls (the floor).

    python benchmarks/search_latency.py --chunks 100000             # the full measurement
    python benchmarks/search_latency.py --chunks 20000 --leads 2000 --queries 200

Queries (``--query-set``): ``questions`` of the six QA sets in ``tests/data/qa`` (what an agent asks),
``keywords``, the real AOL queries of search-benchmark-game (with their ``+``, ``"``, ``-`` syntax), or ``mixed``
(AOL queries and HotpotQA/MuSiQue/Bamboogle questions interleaved, the figures before issue 15). Floors, measured on the same queries in the same run:
``keywords``: Tantivy ``parse_query_lenient`` + ``search`` of 3*top_k (no documents fetched);
``vector``: MiniLM query embedding + FAISS ``search`` of 3*top_k on every shard;
``rrf``: both, with 9*top_k Tantivy hits; ``only_title``: Tantivy on the titles index.
``ratio`` = ours / floor at p50: the cost of escaping, dedup, fusion, tie-breaking and hydration.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import tantivy
from index_common import (
    REPO,
    build_bench_index,
    emit,
    json_stdout,
    load_queries,
    minilm,
    percentiles,
    prepare,
)
from serve_common import agent_queries

from sws.index import WikiIndex
from sws.search import SearchEngine


def timed(fn, items) -> list[float]:
    out = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--leads", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=962 * 2)
    parser.add_argument("--query-set", choices=("questions", "keywords", "mixed"), default="questions")
    parser.add_argument("--chunk-bytes", type=int, default=6300, help="text bytes per chunk (1536 tokens)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1, help="FAISS OpenMP threads (the reference uses 1)")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "results" / "work")
    args = parser.parse_args()
    json_stdout()
    import faiss

    faiss.omp_set_num_threads(args.threads)
    embedder = minilm()
    corpus, vectors = prepare(args.work, args.chunks, args.leads, embedder, args.chunk_bytes)
    out, _ = build_bench_index(
        args.work, corpus, vectors, embedder, f"index-search-{args.chunks}-{args.chunk_bytes}"
    )
    engine = SearchEngine(WikiIndex.open(out, embedder=embedder))
    if args.query_set == "mixed":
        sets = load_queries()
        half = args.queries // 2
        queries = [q for pair in zip(sets["aol"][:half], sets["questions"][:half]) for q in pair]
    else:
        queries = agent_queries(args.query_set, args.queries)
        sets = {args.query_set: queries}
    k, pool = args.top_k, 3 * args.top_k
    for q in queries[:20]:  # warm caches and the model
        engine.search(q, k, "rrf")

    chunks_index = tantivy.Index.open(str(out / "tantivy" / "chunks"))
    titles_index = tantivy.Index.open(str(out / "tantivy" / "titles"))
    from sws.index.keyword.analyzers import analyzer_name, make_analyzer

    for index in (chunks_index, titles_index):
        index.register_tokenizer(analyzer_name("default"), make_analyzer("default"))
    chunk_searcher, title_searcher = chunks_index.searcher(), titles_index.searcher()
    failures = {"tantivy_lenient_raised": 0}

    def raw_tantivy(index, searcher, fields, boosts, limit):
        def run(q):
            try:
                parsed, _ = index.parse_query_lenient(q, fields, boosts)
                searcher.search(parsed, limit, count=False)
            except ValueError:
                failures["tantivy_lenient_raised"] += 1

        return run

    shards = [index for _, index in engine.index.dense.shards]
    qvecs = {q: embedder.embed_queries([q])[0] for q in queries}
    params = faiss.SearchParametersHNSW(efSearch=engine.index.manifest["dense"]["params"]["ef_search"])

    def raw_faiss(q):
        for index in shards:
            index.search(qvecs[q].reshape(1, -1), pool, params=params)

    embed_t = timed(lambda q: embedder.embed_queries([q]), queries)
    floors = {
        "keywords": timed(
            raw_tantivy(chunks_index, chunk_searcher, ["text", "title"], {"title": 2.0}, pool), queries
        ),
        "only_title": timed(raw_tantivy(titles_index, title_searcher, ["title"], None, k), queries),
        "faiss": timed(raw_faiss, queries),
        "tantivy_rrf": timed(
            raw_tantivy(chunks_index, chunk_searcher, ["text", "title"], {"title": 2.0}, 3 * pool), queries
        ),
    }
    floors["vector"] = [e + f for e, f in zip(embed_t, floors["faiss"])]
    floors["rrf"] = [e + f + t for e, f, t in zip(embed_t, floors["faiss"], floors["tantivy_rrf"])]
    ours = {
        "keywords": timed(lambda q: engine.search(q, k, "keywords"), queries),
        "vector": timed(lambda q: engine.search(q, k, "vector"), queries),
        "rrf": timed(lambda q: engine.search(q, k, "rrf"), queries),
        "only_title": timed(lambda q: engine.search_titles(q, k), queries),
    }
    for method, seconds in ours.items():
        mine, floor = percentiles(seconds), percentiles(floors[method])
        emit(
            "search_latency",
            method,
            chunks=args.chunks,
            queries=len(queries),
            query_set=args.query_set,
            top_k=k,
            faiss_threads=args.threads,
            **mine,
            floor_p50_ms=floor["p50_ms"],
            floor_p99_ms=floor["p99_ms"],
            ratio=round(mine["p50_ms"] / floor["p50_ms"], 3),
        )
    emit(
        "search_latency",
        "floor_parts",
        chunks=args.chunks,
        queries=len(queries),
        embed_query=percentiles(embed_t),
        faiss=percentiles(floors["faiss"]),
        tantivy_3k=percentiles(floors["keywords"]),
        tantivy_9k=percentiles(floors["tantivy_rrf"]),
        **failures,
    )
    per_set = {name: [q for q in queries if q in set(sets[name])] for name in sets}
    for name, subset in per_set.items():
        emit(
            "search_latency",
            f"rrf_{name}",
            chunks=args.chunks,
            queries=len(subset),
            **percentiles(timed(lambda q: engine.search(q, k, "rrf"), subset)),
        )


if __name__ == "__main__":
    main()
