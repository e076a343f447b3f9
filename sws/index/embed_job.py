"""Embed every chunk of a corpus into vector shards: in process, or on Ray Data with an actor pool."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from sws.index.corpus import CorpusFiles
from sws.index.embedders import Embedder, make_embedder
from sws.index.errors import EmbeddingError
from sws.index.files import write_json, write_npy
from sws.index.vectors import (
    DTYPES,
    FORMAT,
    Unit,
    VectorSet,
    check_job,
    job_record,
    plan_units,
    vectors_fingerprint,
)
from sws.manifest import refuse_other_artefact

logger = logging.getLogger(__name__)


def embed_unit(corpus: CorpusFiles, unit: Unit, embedder: Embedder, out: Path, dtype: str) -> dict[str, Any]:
    """Embed one unit and write its ``.npy`` then its stats ``.json`` (the done marker)."""
    table = corpus.read_chunk_rows(unit.part, unit.start, unit.stop, ["text", "n_tokens"])
    started = time.perf_counter()
    vectors = embedder.embed_documents(table.column("text").to_pylist())
    seconds = time.perf_counter() - started
    write_npy(unit.npy(out), vectors.astype(dtype))
    stats = {
        "rows": len(vectors),
        "tokens": int(np.sum(table.column("n_tokens").to_numpy())),
        "seconds": seconds,
        "dim": embedder.dim,
        "embedder_fingerprint": embedder.fingerprint,
    }
    write_json(unit.stats(out), stats)
    return stats


class UnitEmbedder:
    """Ray Data actor: loads the embedder once, then embeds the units of each batch (one per call)."""

    def __init__(self, corpus_root: str, out: str, spec: dict[str, Any], dtype: str, threads: int | None):
        if threads is not None:
            import torch

            torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
        self.corpus, self.out, self.dtype = CorpusFiles.open(corpus_root), Path(out), dtype
        self.embedder = make_embedder(**spec)
        self.logical_gpu = _logical_gpu_note()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list]:
        names = []
        for part, start, stop, name in zip(batch["part"], batch["start"], batch["stop"], batch["name"]):
            unit = Unit(int(part), int(start), int(stop), str(name))
            embed_unit(self.corpus, unit, self.embedder, self.out, self.dtype)
            names.append(unit.name)
        return {"name": names, "logical_gpu": [self.logical_gpu] * len(names)}


def _logical_gpu_note() -> str:
    """What to tell when Ray gave this actor a GPU that CUDA does not see (a node declaring ``GPU`` without
    one, as a test cluster's): the embedding then runs on the CPU. Empty otherwise."""
    import ray
    import torch

    gpus = ray.get_gpu_ids()
    if not gpus or torch.cuda.is_available():
        return ""
    return f"GPU {gpus} assigned by Ray on node {ray.get_runtime_context().get_node_id()[:8]}, but no CUDA device is visible there: embedded on the CPU"


def _run_ray(
    corpus: CorpusFiles,
    out: Path,
    spec: dict[str, Any],
    pending: list[Unit],
    dtype: str,
    workers: int,
    num_cpus: float,
    num_gpus: float,
    threads: int | None,
) -> None:
    import ray

    from sws.raykit import init_ray

    init_ray()  # a no-op when the caller already started or joined Ray
    items = [asdict(u) for u in pending]
    done = (
        ray.data.from_items(items, override_num_blocks=len(items))
        .map_batches(
            UnitEmbedder,
            fn_constructor_kwargs={
                "corpus_root": str(corpus.root),
                "out": str(out),
                "spec": spec,
                "dtype": dtype,
                "threads": threads,
            },
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=min(workers, len(pending))),
            num_cpus=num_cpus,
            num_gpus=num_gpus,
        )
        .materialize()
    )
    for note in sorted({row["logical_gpu"] for row in done.take_all()} - {""}):
        logger.warning(note)


def embed_corpus(
    corpus_dir: str | Path,
    out_dir: str | Path,
    embedder: Embedder | dict[str, Any],
    *,
    workers: int = 1,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    threads: int | None = None,
    rows_per_unit: int = 4096,
    dtype: str = "float16",
) -> VectorSet:
    """Embed all chunks into ``out_dir``; resumable (finished units are kept) and deterministic.

    Units are row ranges of chunk parts; each worker reads its unit's rows, embeds them in
    length-sorted batches and writes one shard, so shard order is corpus order whatever the
    scheduling. With ``workers=0`` units run in this process; otherwise on Ray Data with an actor
    pool of ``workers`` actors, each with ``num_cpus``/``num_gpus`` (``num_gpus=1`` on GPU clusters).
    Ray is started locally (``sws.raykit.init_ray``) unless already initialised.

    Args:
        embedder: an embedder, or its ``spec()`` (actors build their own copy from the spec).
        threads: torch threads per CPU actor (None: ``num_cpus`` rounded, at least 1; 0: every core of its
            node, for one actor on a machine of its own).
        dtype: stored vector dtype, "float16" (half the disk) or "float32".

    Raises:
        CorpusError / EmptyCorpusError: bad corpus; FingerprintMismatchError: ``out_dir`` holds another run;
        OtherArtefactError: ``out_dir`` holds another artefact's manifest (a corpus, an index).
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if workers < 0 or (threads is not None and threads < 0):
        raise ValueError(f"workers and threads must be >= 0, got {workers} and {threads}")
    corpus, out = CorpusFiles.open(corpus_dir), Path(out_dir)
    spec = embedder if isinstance(embedder, dict) else embedder.spec()
    units = plan_units(corpus, rows_per_unit)
    record = job_record(corpus, spec, dtype, units)
    refuse_other_artefact(out, FORMAT)
    check_job(out, record)
    (out / "units").mkdir(parents=True, exist_ok=True)
    write_json(out / "job.json", record)
    pending = [u for u in units if not u.done(out)]
    started = time.perf_counter()
    if pending and workers == 0:
        local = embedder if isinstance(embedder, Embedder) else make_embedder(**spec)
        for unit in pending:
            embed_unit(corpus, unit, local, out, dtype)
    elif pending:
        if threads is None and not num_gpus:
            threads = max(1, round(num_cpus))
        _run_ray(corpus, out, spec, pending, dtype, workers, num_cpus, num_gpus, threads)
    wall = time.perf_counter() - started
    return _finish(corpus, out, spec, units, dtype, resumed=len(units) - len(pending), wall_s=wall)


def _finish(
    corpus: CorpusFiles,
    out: Path,
    spec: dict[str, Any],
    units: list[Unit],
    dtype: str,
    resumed: int,
    wall_s: float,
) -> VectorSet:
    stats = [json.loads(u.stats(out).read_text()) for u in units]
    spaces = {(s["embedder_fingerprint"], s["dim"]) for s in stats}
    if len(spaces) != 1:
        raise EmbeddingError(f"units of {out} were embedded in different spaces: {sorted(spaces)}")
    ((embedder_fp, dim),) = spaces
    write_json(
        out / "manifest.json",
        {
            "format": FORMAT,
            "corpus_fingerprint": corpus.fingerprint,
            "embedder": spec,
            "embedder_fingerprint": embedder_fp,
            "dim": dim,
            "dtype": dtype,
            "rows": sum(s["rows"] for s in stats),
            "tokens": sum(s["tokens"] for s in stats),
            "embed_seconds": round(sum(s["seconds"] for s in stats), 3),
            "last_run": {"units": len(units) - resumed, "resumed_units": resumed, "wall_s": round(wall_s, 3)},
            "fingerprint": vectors_fingerprint(corpus.fingerprint, embedder_fp, dtype),
            "units": [asdict(u) for u in units],
        },
    )
    return VectorSet.open(out)
