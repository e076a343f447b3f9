"""The paper's released FAISS file in form, memory-mapped at scale on one node (issue 45 §3).

    python benchmarks/scale_reference_faiss.py --vectors 1000000 --out DIR   # the measurement
    python benchmarks/scale_reference_faiss.py --quick --out DIR             # 50k vectors, smoke

The reference's ``index.faiss`` is ``IndexHNSWSQ(1024, QT_fp16, M=32, METRIC_INNER_PRODUCT)`` with
efConstruction 200 and efSearch 64 stored in the file (``../shared/peer/make_reference_indexes.py``, the form
``sws/index/reference/export.py`` writes): ~25 GB at 10.8M vectors. This builds that form over ``--vectors``
synthetic unit vectors with a realistic structure (:func:`vector_block`: a shared direction, clusters of
Zipf-distributed sizes, per-vector noise; queries drawn the same way), caches the file under ``--out`` (the
build is checkpointed and resumes; a rerun skips it) and opens it as sws opens an adopted reference index
(``ReferenceFaissSearcher``: ``IO_FLAG_MMAP_IFC``), each replica in a fresh process. JSON lines:

- ``build_rate``: a ``--probe``-vector build first: vectors/s, and the projected time of the full build (linear,
  and scaled by log n for HNSW's deeper searches per insert).
- ``build``: the full build's seconds and vectors/s (``cached`` when the file was there).
- ``file``: bytes, of which fp16 codes (n x dim x 2) and graph (the rest).
- ``mmap``: whether faiss maps the HNSW neighbour arrays of this index type: anonymous and file-backed RSS
  added by opening with ``IO_FLAG_MMAP_IFC`` against a plain read (measured, never assumed).
- ``open``: cold (the file's pages evicted: ``posix_fadvise(DONTNEED)``, checked with ``fincore``; the
  record says how) and warm (the file in the page cache): open seconds, RSS after open, then search latency
  p50 / p99 at efSearch 64, top 10, one FAISS thread, over ``--queries`` queries (cold: the first pass
  right after the cold open; warm: steady state) and recall@10 against exact search.
- ``replicas``: two replica processes at once on the cached file: each one's open time, RSS / anonymous /
  file-backed RSS and PSS after open and after searching (PSS splits the shared page-cache pages).
- ``summary``: goals (the RSS opening adds to a replica <= 0.1 x the file), vector QPS per core, and the projection to the
  paper's 10.8M vectors (``scale_projection.reference_faiss``). Exits 1 when a goal fails.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:  # run as `python benchmarks/scale_reference_faiss.py`
        sys.path.insert(0, str(_path))

import numpy as np
from corpus_common import emit, json_stdout
from index_build import ENWIKI_CHUNKS
from index_common import percentiles
from scale_projection import reference_faiss
from scale_stages import in_child
from stage_memory import memory

WORK = REPO / "benchmarks" / "results" / "work" / "reference-faiss"
RSS_GOAL = 0.1  # replica RSS after open / file bytes
BLOCK = 16_384  # vectors generated (and added) per block
TOP_K = 10


def params_of(args: argparse.Namespace, n: int) -> dict[str, Any]:
    return {
        "vectors": n,
        "dim": args.dim,
        "m": args.m,
        "ef_construction": args.ef_construction,
        "ef_search": args.ef_search,
        "clusters": args.clusters or max(16, n // 256),
        "seed": args.seed,
    }


def index_path(out: Path, p: dict[str, Any]) -> Path:
    return out / f"hnswsq-fp16-ip-{p['vectors']}x{p['dim']}-m{p['m']}-efc{p['ef_construction']}.faiss"


# --- the synthetic vectors ------------------------------------------------------------------------------------


def _centers(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Cluster centers (a shared direction of weight 0.5 plus a Gaussian part of norm ~1) and Zipf weights."""
    rng = np.random.default_rng([p["seed"], 0])
    d, k = p["dim"], p["clusters"]
    shared = rng.standard_normal(d).astype(np.float32)
    shared /= np.linalg.norm(shared)
    centers = 0.5 * shared + rng.standard_normal((k, d)).astype(np.float32) / math.sqrt(d)
    weights = 1.0 / np.arange(1, k + 1) ** 0.8
    return centers, weights / weights.sum()


def vector_block(p: dict[str, Any], block: int, rows: int, stream: int = 1) -> np.ndarray:
    """Rows ``block * BLOCK ..`` of stream ``stream`` (1: the index, 2: the queries): a cluster's center plus
    noise of norm ~0.8, L2-normalised. Deterministic per (seed, stream, block), so nothing is stored: random
    pairs have cosine ~0.13, a cluster's members ~0.65 (a sentence embedder's range)."""
    centers, weights = _centers(p)
    rng = np.random.default_rng([p["seed"], stream, block])
    x = centers[rng.choice(len(centers), size=rows, p=weights)]
    x += 0.8 * rng.standard_normal(x.shape, dtype=np.float32) / math.sqrt(p["dim"])
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def blocks(p: dict[str, Any]):
    for b in range(math.ceil(p["vectors"] / BLOCK)):
        yield b, vector_block(p, b, min(BLOCK, p["vectors"] - b * BLOCK))


# --- build (a child process) ----------------------------------------------------------------------------------


def _new_index(p: dict[str, Any]) -> Any:
    """The reference's form (``make_reference_indexes.py``; ``sws/index/reference/export.py`` writes the same)."""
    import faiss

    index = faiss.IndexHNSWSQ(p["dim"], faiss.ScalarQuantizer.QT_fp16, p["m"], faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction, index.hnsw.efSearch = p["ef_construction"], p["ef_search"]
    return index


def build(p: dict[str, Any], path: Path, checkpoint_rows: int, threads: int = 0) -> dict[str, Any]:
    """Child: build the index at ``path`` (atomically) on ``threads`` FAISS threads (0: every core), resuming
    from ``path.partial`` (written every ``checkpoint_rows`` vectors); the record of a finished build is kept
    beside it (``.json``)."""
    import faiss

    if threads:
        faiss.omp_set_num_threads(threads)

    record_path, partial = path.with_suffix(".json"), path.with_name(path.name + ".partial")
    state_path = partial.with_suffix(".json")
    index, done, seconds = _new_index(p), 0, 0.0
    if partial.is_file() and state_path.is_file():
        state = json.loads(state_path.read_text())
        if state["params"] == p:
            index, done, seconds = faiss.read_index(str(partial)), state["rows"], state["seconds"]
            print(f"scale_reference_faiss: resuming at {done:,} vectors", file=sys.stderr, flush=True)
    started, last = time.perf_counter() - seconds, done
    for b, x in blocks(p):
        if b * BLOCK < done:
            continue
        if not index.is_trained:
            index.train(x)  # fp16 codes need no statistics; FAISS wants the call
        index.add(x)
        done += len(x)
        elapsed = time.perf_counter() - started
        if done - last >= checkpoint_rows and done < p["vectors"]:
            faiss.write_index(index, str(partial) + ".tmp")
            os.replace(str(partial) + ".tmp", partial)
            state_path.write_text(json.dumps({"params": p, "rows": done, "seconds": elapsed}))
            last = done
        if b % 8 == 7 or done == p["vectors"]:
            eta = elapsed / done * (p["vectors"] - done)
            print(
                f"scale_reference_faiss: {done:,}/{p['vectors']:,} vectors, {done / elapsed:.0f}/s, "
                f"~{eta / 60:.0f} min left",
                file=sys.stderr,
                flush=True,
            )
    seconds = time.perf_counter() - started
    faiss.write_index(index, str(path) + ".tmp")
    os.replace(str(path) + ".tmp", path)
    record = {"params": p, "seconds": round(seconds, 1), "vectors_per_s": round(p["vectors"] / seconds, 1)}
    record_path.write_text(json.dumps(record))
    partial.unlink(missing_ok=True)
    state_path.unlink(missing_ok=True)
    return record


def ensure_built(
    p: dict[str, Any], out: Path, checkpoint_rows: int, threads: int = 0
) -> tuple[Path, dict[str, Any], bool]:
    """The cached index file of ``p`` (built in a child process when missing): path, build record, cached."""
    path = index_path(out, p)
    record_path = path.with_suffix(".json")
    if path.is_file() and record_path.is_file() and json.loads(record_path.read_text())["params"] == p:
        return path, json.loads(record_path.read_text()), True
    out.mkdir(parents=True, exist_ok=True)
    return path, in_child(build, p, path, checkpoint_rows, threads), False


def write_chunk_keys(path: Path, n: int) -> Path:
    """``chunk_keys.npy`` beside the index: row i is chunk ``<i // 4>_<i % 4>`` (what ``sws index import``
    writes from ``ids.pkl``; ``ReferenceFaissSearcher`` maps it)."""
    from sws.index.reference.keys import INDEX_BITS, write_keys

    keys = path.with_name(path.stem + ".chunk_keys.npy")
    if not keys.is_file():
        rows = np.arange(n, dtype=np.int64)
        write_keys(keys, ((rows // 4) << INDEX_BITS) | (rows % 4))
    return keys


# --- queries and exact neighbours -----------------------------------------------------------------------------


def queries_and_truth(p: dict[str, Any], n_queries: int, out: Path) -> tuple[Path, Path]:
    """``n_queries`` queries (stream 2) and their exact top 10 by inner product over the float32 vectors,
    computed block by block and cached beside the index."""
    stem = index_path(out, p).stem
    q_path, t_path = out / f"{stem}.queries-{n_queries}.npy", out / f"{stem}.truth-{n_queries}.npy"
    if q_path.is_file() and t_path.is_file():
        return q_path, t_path
    q = vector_block(p, 0, n_queries, stream=2)
    best_s = np.full((n_queries, 0), -np.inf, np.float32)
    best_r = np.zeros((n_queries, 0), np.int64)
    for b, x in blocks(p):
        scores = q @ x.T
        rows = np.broadcast_to(np.arange(b * BLOCK, b * BLOCK + len(x)), scores.shape)
        best_s, best_r = np.hstack([best_s, scores]), np.hstack([best_r, rows])
        keep = np.argsort(-best_s, axis=1, kind="stable")[:, :TOP_K]
        best_s, best_r = np.take_along_axis(best_s, keep, 1), np.take_along_axis(best_r, keep, 1)
    np.save(q_path, q)
    np.save(t_path, best_r)
    return q_path, t_path


# --- page cache -----------------------------------------------------------------------------------------------


def resident_bytes(path: Path) -> int | None:
    """Bytes of ``path`` in the page cache (util-linux ``fincore``), or None without it."""
    if not shutil.which("fincore"):
        return None
    done = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    return int(done.stdout.split()[0]) if done.returncode == 0 and done.stdout.split() else None


def evict(paths: list[Path]) -> dict[str, Any]:
    """Drop ``paths`` from the page cache with ``posix_fadvise(DONTNEED)`` (only these files: the machine is
    shared), falling back to ``echo 3 > /proc/sys/vm/drop_caches`` (root) when pages stay; says which worked."""
    os.sync()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    method = "posix_fadvise"
    left = resident_bytes(paths[0])
    if left is not None and left > 0.01 * paths[0].stat().st_size:
        try:
            Path("/proc/sys/vm/drop_caches").write_text("3")
            method, left = "drop_caches", resident_bytes(paths[0])
        except OSError:
            pass
    return {"evicted_by": method, "resident_after_evict": left}


def warm(paths: list[Path]) -> dict[str, Any]:
    """Read the files once so the page cache holds them (the warm case)."""
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    return {"resident_after_read": resident_bytes(paths[0])}


# --- a replica (a child process) ------------------------------------------------------------------------------


def pss() -> dict[str, int]:
    """``Pss``, ``Pss_Anon`` and ``Pss_File`` of this process (``/proc/self/smaps_rollup``), bytes."""
    keys = {"Pss": "pss", "Pss_Anon": "pss_anon", "Pss_File": "pss_file"}
    out = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in keys:
            out[keys[name]] = int(value.split()[0]) * 1024
    return out


def replica(
    path: Path, keys: Path, q_path: Path, t_path: Path, passes: int, barrier: Any = None
) -> dict[str, Any]:
    """Child: open the index as sws opens an adopted reference index, then search every query ``passes`` times
    (one FAISS thread, top 10, the efSearch stored in the file); memory after open and after the searches,
    latency of the first pass and of the last, recall@10 of the last."""
    import faiss

    from sws.index.reference.dense import ReferenceFaissSearcher
    from sws.index.reference.keys import ChunkKeys

    faiss.omp_set_num_threads(1)
    queries, truth = np.load(q_path), np.load(t_path)
    before = memory()
    started = time.perf_counter()
    searcher = ReferenceFaissSearcher(path, ChunkKeys(keys))
    opened = time.perf_counter() - started
    out: dict[str, Any] = {
        "open_s": round(opened, 3),
        "params": searcher.params,
        "before_open": before,
        "after_open": memory() | pss(),
    }
    if barrier is not None:
        barrier.wait()
    for i in range(passes):
        seconds, found = [], []
        for q in queries:
            t0 = time.perf_counter()
            hits = searcher.search(q, TOP_K)
            seconds.append(time.perf_counter() - t0)
            found.append({row for row, _ in hits})
        out["first_pass" if i == 0 else "last_pass"] = percentiles(seconds) | {
            "first_query_ms": round(seconds[0] * 1000, 3)
        }
    recall = np.mean([len(f & set(t)) / TOP_K for f, t in zip(found, truth.tolist(), strict=True)])
    out["recall_at_10"] = round(float(recall), 4)
    out["after_search"] = memory() | pss()
    return out


def plain_read_memory(path: Path) -> dict[str, Any]:
    """Child: memory added by ``faiss.read_index`` without mmap (everything read into anonymous memory)."""
    import faiss

    before = memory()
    index = faiss.read_index(str(path))
    after = memory()
    return {"ntotal": index.ntotal, **{k: after[k] - before[k] for k in ("rss", "rss_anon", "rss_file")}}


def _replica_to(results: Any, i: int, *args: Any) -> None:
    """Child: :func:`replica`, its result (or its error) put on ``results`` as ``(i, result)``."""
    try:
        results.put((i, replica(*args)))
    except BaseException as exc:  # reported by the parent, then raised
        results.put((i, {"error": repr(exc)}))
        raise


def two_replicas(
    path: Path, keys: Path, q_path: Path, t_path: Path, passes: int, timeout_s: float = 3600
) -> list[dict[str, Any]]:
    """Two replica processes at once (both open, then both search), as two replicas on one node."""
    from multiprocessing import get_context

    ctx = get_context("spawn")
    barrier, results = ctx.Barrier(2, timeout=timeout_s), ctx.Queue()
    procs = [
        ctx.Process(target=_replica_to, args=(results, i, path, keys, q_path, t_path, passes, barrier))
        for i in range(2)
    ]
    for proc in procs:
        proc.start()
    try:
        out = dict(results.get(timeout=timeout_s) for _ in procs)
    finally:
        for proc in procs:
            proc.join(60)
    if errors := [r["error"] for r in out.values() if "error" in r]:
        raise RuntimeError(f"a replica failed: {errors}")
    return [out[i] for i in range(2)]


# --- one size -------------------------------------------------------------------------------------------------


def mem_fields(m: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: m[k] for k in ("rss", "rss_anon", "rss_file", "pss", "pss_file") if k in m} | {
        "rss_anon_added": m["rss_anon"] - before["rss_anon"],
        "rss_file_added": m["rss_file"] - before["rss_file"],
    }


def measure(p: dict[str, Any], args: argparse.Namespace, full: bool) -> dict[str, Any]:
    """Build (or reuse) one size, then its file, mmap, open, latency and replica figures (``full``: all of
    them; else the open and latency only, for the projection's second point)."""
    n = p["vectors"]
    path, record, cached = ensure_built(p, args.out, args.checkpoint_rows, args.threads)
    emit("scale_reference_faiss", "build", **record, cached=cached, path=str(path))
    keys = write_chunk_keys(path, n)
    q_path, t_path = queries_and_truth(p, args.queries, args.out)
    size, codes = path.stat().st_size, n * p["dim"] * 2
    fig: dict[str, Any] = {
        "vectors": n,
        "file_bytes": size,
        "codes_bytes": codes,
        "graph_bytes": size - codes,
    }
    emit(
        "scale_reference_faiss",
        "file",
        vectors=n,
        bytes=size,
        codes_bytes=codes,
        graph_bytes=size - codes,
        bytes_per_vector=round(size / n, 1),
        graph_share=round((size - codes) / size, 4),
    )
    files = [path, keys]
    cold_cache = evict(files)
    cold = in_child(replica, path, keys, q_path, t_path, 1)
    warm_cache = warm(files)
    hot = in_child(replica, path, keys, q_path, t_path, 2)
    fig["open"] = {"cold_s": cold["open_s"], "warm_s": hot["open_s"]}
    fig["latency"] = {"cold": cold["first_pass"], "warm": hot["last_pass"]}
    fig["rss_after_open"] = hot["after_open"]["rss"] - hot["before_open"]["rss"]
    fig["rss_anon_after_open"] = hot["after_open"]["rss_anon"] - hot["before_open"]["rss_anon"]
    for side, r, cache in (("cold", cold, cold_cache), ("warm", hot, warm_cache)):
        emit(
            "scale_reference_faiss",
            "open",
            vectors=n,
            side=side,
            **cache,
            open_s=r["open_s"],
            params=r["params"],
            after_open=mem_fields(r["after_open"], r["before_open"]),
            latency_ms=r["first_pass" if side == "cold" else "last_pass"],
            recall_at_10=r["recall_at_10"],
            queries=args.queries,
            faiss_threads=1,
        )
    if not full:
        return fig
    plain = in_child(plain_read_memory, path)
    mapped = hot["after_open"]["rss_anon"] - hot["before_open"]["rss_anon"]
    file_added = hot["after_open"]["rss_file"] - hot["before_open"]["rss_file"]
    neighbours = fig["graph_bytes"]  # the graph is the neighbour lists, their offsets and the levels
    fig["neighbours_mapped"] = mapped < 0.5 * neighbours
    emit(
        "scale_reference_faiss",
        "mmap",
        vectors=n,
        flags="IO_FLAG_MMAP_IFC | IO_FLAG_READ_ONLY",
        rss_anon_added_mmap=mapped,
        rss_file_added_mmap=file_added,
        rss_anon_added_plain_read=plain["rss_anon"],
        graph_bytes=neighbours,
        codes_mapped=mapped < 0.5 * codes,
        neighbours_mapped=fig["neighbours_mapped"],
        # mapped, yet their pages resident after open: faiss 1.15's validate_HNSW reads every neighbour id
        graph_pages_read_at_open=file_added >= 0.9 * neighbours,
    )
    warm(files)
    both = two_replicas(path, keys, q_path, t_path, 2)
    fig["replicas"] = []
    for i, r in enumerate(both):
        rec = {
            "replica": i,
            "open_s": r["open_s"],
            "after_open": mem_fields(r["after_open"], r["before_open"]),
            "after_search": mem_fields(r["after_search"], r["before_open"]),
            "latency_ms": r["last_pass"],
            # what opening the index added to the replica (the interpreter and libraries are ~120 MB before)
            "rss_added_by_open_over_file": round(
                (r["after_open"]["rss"] - r["before_open"]["rss"]) / size, 4
            ),
        }
        fig["replicas"].append(rec)
        emit("scale_reference_faiss", "replicas", vectors=n, replicas=2, **rec)
    return fig


def build_rate(args: argparse.Namespace, target: int) -> dict[str, Any]:
    """The probe size's build (cached like any size) and the projected time of ``target`` vectors."""
    p = params_of(args, args.probe)
    _, record, cached = ensure_built(p, args.out, args.checkpoint_rows, args.threads)
    rate = record["vectors_per_s"]
    linear = target / rate
    log_scaled = linear * math.log(target) / math.log(args.probe)
    out = {
        "probe_vectors": args.probe,
        "seconds": record["seconds"],
        "vectors_per_s": rate,
        "cached": cached,
        "target_vectors": target,
        "projected_build_s_linear": round(linear, 1),
        "projected_build_s_log_n": round(log_scaled, 1),
        "build_threads": args.threads or os.cpu_count(),
    }
    emit("scale_reference_faiss", "build_rate", **out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument(
        "--probe", type=int, default=100_000, help="the build-rate probe and second size (0: none)"
    )
    parser.add_argument("--out", type=Path, default=WORK, help="where the index files are kept")
    parser.add_argument("--quick", action="store_true", help="50k vectors, a 5k probe, 100 queries")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--ef-construction", type=int, default=200)
    parser.add_argument("--ef-search", type=int, default=64, help="stored in the file, as the reference does")
    parser.add_argument("--clusters", type=int, default=0, help="0: vectors / 256")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="FAISS build threads (0: every core)")
    parser.add_argument("--checkpoint-rows", type=int, default=250_000)
    parser.add_argument(
        "--project-only", action="store_true", help="the build-rate probe and projection only"
    )
    args = parser.parse_args()
    if args.quick:
        args.vectors, args.probe, args.queries = 50_000, 5_000, 100
    json_stdout()
    import faiss

    args.out.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(args.out).free
    need = args.vectors * (args.dim * 2 + 300) * 2  # the file and its checkpoint
    emit(
        "scale_reference_faiss",
        "startup",
        out=str(args.out.resolve()),
        disk_free_bytes=free,
        disk_needed_bytes=need,
        faiss=faiss.__version__,
        drop_caches_writable=os.access("/proc/sys/vm/drop_caches", os.W_OK),
        fincore=shutil.which("fincore") is not None,
        **params_of(args, args.vectors),
    )
    if free < need:
        emit(
            "scale_reference_faiss", "skipped", reason=f"{free:,} bytes free under {args.out}, need {need:,}"
        )
        return 1
    rate = build_rate(args, args.vectors) if args.probe else None
    if args.project_only:
        return 0
    small = measure(params_of(args, args.probe), args, full=False) if args.probe else None
    big = measure(params_of(args, args.vectors), args, full=True)
    worst = max(r["rss_added_by_open_over_file"] for r in big["replicas"])
    goals = {
        "replica_rss_added_by_open_over_file": {"value": worst, "goal": RSS_GOAL, "ok": worst <= RSS_GOAL},
    }
    warm_mean = big["latency"]["warm"]["mean_ms"]
    summary = {
        "vectors": big["vectors"],
        "neighbours_mapped": big["neighbours_mapped"],
        "vector_search_qps_per_core": round(1000 / warm_mean, 1),
        "build_rate": rate,
        "goals": goals,
        "passed": all(g["ok"] for g in goals.values()),
    }
    if small is not None and small["vectors"] < big["vectors"]:
        summary["projection"] = reference_faiss(small, big, ENWIKI_CHUNKS)
    emit("scale_reference_faiss", "summary", **summary, sizes=[s for s in (small, big) if s])
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
