"""The corpus build: plan the dump into shards, build the missing ones on Ray Data, write the manifest.

Re-running on the same output directory resumes: shards whose stats file exists and whose Parquet parts read
as it records are skipped; a shard with a damaged part is built again and named in the log and the manifest.
A directory planned with other inputs or another config is refused rather than mixed.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from sws.corpus.dump import DumpError, DumpUnit, plan_units
from sws.corpus.shard import CorpusShardBuilder, shard_damage, shard_name, stats_path
from sws.io import write_text_atomically
from sws.manifest import MANIFEST, OtherArtefactError, describe_input, digest, refuse_other_artefact, versions

logger = logging.getLogger(__name__)
KIND = "sws-corpus"  # the manifest's "kind"


class CorpusBuildError(RuntimeError):
    """The build cannot start or cannot go on (bad inputs, a directory of another build)."""


def _plan(
    out_dir: Path,
    dumps: list[str],
    index_paths: list[str],
    options: dict,
    streams_per_shard: int,
    expected: dict[str, dict] | None = None,
) -> dict:
    paths = dumps + index_paths
    plan_path = out_dir / "_plan.json"
    previous = json.loads(plan_path.read_text()) if plan_path.is_file() else None
    inputs = None
    if all(os.path.isfile(p) for p in paths):  # else plan_units names the missing file
        # Inputs are checked against their fetch manifest before anything reads them. Checksums of unchanged
        # files are not recomputed on resume; the manifest's digest (sha1 or md5) is computed in the same
        # read as sha256.
        expected = expected or {}
        _check_sizes(expected)
        recorded = (
            previous["inputs"] if previous and _same_files(previous["inputs"], paths) else [{}] * len(paths)
        )
        inputs = [_described(r, p, _algorithms(expected, p)) for r, p in zip(recorded, paths)]
        _check_digests(inputs, expected)
    try:
        units = plan_units(dumps, index_paths, streams_per_shard)
    except DumpError as exc:
        raise CorpusBuildError(str(exc)) from exc
    if inputs is None:
        raise CorpusBuildError(f"input files not found: {[p for p in paths if not os.path.isfile(p)]}")
    plan = {
        "inputs": inputs,
        "options": options,
        "units": [[u.path, u.start, u.end] for u in units],
        "fingerprint": digest([[i["sha256"] for i in inputs], options, streams_per_shard]),
    }
    if previous and previous["fingerprint"] != plan["fingerprint"]:
        raise CorpusBuildError(
            f"{out_dir} holds a corpus built from other inputs or another config "
            f"(fingerprint {previous['fingerprint']} != {plan['fingerprint']}); use a new --out directory"
        )
    _refuse_other_artefact(out_dir, plan["fingerprint"])  # a corpus whose plan was removed
    write_text_atomically(plan_path, json.dumps(plan, indent=1))
    return plan


def _refuse_other_artefact(out_dir: Path, fingerprint: str | None = None) -> None:
    try:
        refuse_other_artefact(out_dir, KIND, fingerprint)
    except OtherArtefactError as exc:
        raise CorpusBuildError(str(exc)) from exc


def _described(recorded: dict, path: str, algorithms: tuple[str, ...]) -> dict:
    """The description recorded by an earlier run when it has every digest needed, else a fresh one."""
    return recorded if recorded and set(algorithms) <= set(recorded) else describe_input(path, algorithms)


def _algorithms(expected: dict[str, dict], path: str) -> tuple[str, ...]:
    return tuple(k for k in expected.get(str(Path(path).resolve()), {}) if k not in ("bytes", "manifest"))


def _check_sizes(expected: dict[str, dict]) -> None:
    """Refuse an input whose size differs from the fetch manifest's before hashing anything."""
    for path, want in expected.items():
        size = Path(path).stat().st_size
        if want.get("bytes") is not None and size != want["bytes"]:
            raise CorpusBuildError(
                f"{path} has {size:,} bytes but {want['manifest']} recorded {want['bytes']:,}: the file is "
                f"truncated or not the one fetched; run `sws fetch dump` again to complete and verify it"
            )


def _check_digests(inputs: list[dict], expected: dict[str, dict]) -> None:
    """Refuse an input whose checksum differs from the one its fetch manifest recorded."""
    for described in inputs:
        want = expected.get(described["path"], {})
        for algorithm in _algorithms(expected, described["path"]):
            if described[algorithm] != want[algorithm]:
                raise CorpusBuildError(
                    f"{described['path']}: {algorithm} {described[algorithm]} does not match "
                    f"{want[algorithm]} recorded in {want['manifest']}: the file is corrupt or not the one "
                    f"fetched; run `sws fetch dump` again (or set dump.fetch_manifest to the right manifest)"
                )


def _same_files(recorded: list[dict], paths: list[str]) -> bool:
    if len(recorded) != len(paths):
        return False
    return all(
        r["path"] == str(Path(p).resolve()) and r["bytes"] == Path(p).stat().st_size
        for r, p in zip(recorded, paths)
    )


def build_corpus(
    dumps: list[str],
    out_dir: str | Path,
    *,
    clean: dict,
    chunk: dict,
    index_paths: list[str] = (),
    streams_per_shard: int = 20,
    workers: int | None = None,
    progress: bool = True,
    expected: dict[str, dict] | None = None,
) -> dict:
    """Build (or resume) the corpus of ``dumps`` in ``out_dir`` on the running Ray; returns the manifest.

    Args:
        dumps: dump files (.xml, .xml.bz2, multistream .xml.bz2).
        out_dir: output directory.
        clean: :class:`~sws.config.CleanConfig` fields.
        chunk: :class:`~sws.config.ChunkConfig` fields.
        index_paths: multistream indexes, paired with ``dumps`` by position.
        streams_per_shard: bz2 streams per work unit of a multistream dump.
        workers: actor-pool size (None: the cluster's CPU count).
        progress: show a progress bar.
        expected: what the inputs' fetch manifest recorded, by resolved path: ``{"bytes": n, <algorithm>:
            hex, "manifest": path}`` (``sws.fetch.expected_digests``); an input whose size or checksum differs
            is refused. None: the inputs are not checked.

    Raises:
        CorpusBuildError: unreadable inputs, inputs that fail the fetch manifest's checksums, an output
            directory of another build or holding another artefact's manifest, an output directory that cannot
            be created, or a shard that cannot be written (a full disk).
    """
    import ray

    out_dir = Path(out_dir)
    _refuse_other_artefact(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # an existing file, a file on the way, no permission
        raise CorpusBuildError(f"cannot create output directory {out_dir}: {exc.strerror}") from exc
    options = {"clean": dict(clean), "chunk": dict(chunk)}
    started = time.time()
    plan = _plan(out_dir, list(dumps), list(index_paths), options, streams_per_shard, expected)
    units = [DumpUnit(p, s, e) for p, s, e in plan["units"]]
    rebuilt = _damaged_shards(out_dir, len(units))
    pending = [i for i in range(len(units)) if not stats_path(out_dir, i).is_file()]
    if pending:
        size = workers or max(1, min(len(pending), int(ray.cluster_resources().get("CPU", 1))))
        items = [
            {"shard": i, "path": units[i].path, "start": units[i].start, "end": units[i].end} for i in pending
        ]
        dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            _ShardActor,
            fn_constructor_kwargs={
                "out_dir": str(out_dir),
                "clean": options["clean"],
                "chunk": options["chunk"],
            },
            batch_size=1,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=size),
            num_cpus=1,
        )
        articles = 0
        with tqdm(
            total=len(units), initial=len(units) - len(pending), unit="shard", disable=not progress
        ) as bar:
            for row in dataset.iter_rows():
                if row["error"]:
                    raise CorpusBuildError(
                        f"{out_dir}: {row['error']} (the shards finished before it are kept: rerun to go on)"
                    )
                articles += row["articles"]
                bar.set_postfix(articles=articles)
                bar.update()
    return _write_manifest(out_dir, plan, units, time.time() - started, rebuilt)


def _damaged_shards(out_dir: Path, n_shards: int) -> dict[int, str]:
    """Shards marked complete whose parts are damaged, with the reason; their stats files are removed."""
    damaged = {}
    for i in range(n_shards):
        if stats_path(out_dir, i).is_file() and (reason := shard_damage(out_dir, i)):
            logger.warning("shard %s is damaged and is built again: %s", shard_name(i), reason)
            stats_path(out_dir, i).unlink()
            damaged[i] = reason
    return damaged


class _ShardActor:
    """Ray Data stateful transform: one :class:`CorpusShardBuilder` per actor (tokenizer loaded once)."""

    def __init__(self, out_dir: str, clean: dict, chunk: dict) -> None:
        self.builder = CorpusShardBuilder.from_options(out_dir, clean, chunk)

    def __call__(self, batch):
        """Build each shard; a system error (a full disk) is returned as the row's ``error`` for the driver
        to report, since Ray Data would wrap it in an exception that has lost its cause."""
        import pyarrow as pa

        out = []
        for row in batch.to_pylist():
            result = {"shard": row["shard"], "articles": 0, "error": None}
            try:
                stats = self.builder.build(row["shard"], DumpUnit(row["path"], row["start"], row["end"]))
                result["articles"] = stats["counts"].get("articles", 0)
            except OSError as exc:
                result["error"] = f"shard {shard_name(row['shard'])}: {exc}"
            out.append(result)
        schema = pa.schema([("shard", pa.int64()), ("articles", pa.int64()), ("error", pa.string())])
        return pa.Table.from_pylist(out, schema=schema)  # the same for every block, errors or not


def _write_manifest(
    out_dir: Path, plan: dict, units: list[DumpUnit], seconds: float, rebuilt: dict[int, str]
) -> dict:
    shard_stats = [json.loads(stats_path(out_dir, i).read_text()) for i in range(len(units))]
    counts: Counter = Counter()
    for stats in shard_stats:
        counts.update(stats["counts"])
    skipped = {k.removeprefix("skipped_"): v for k, v in sorted(counts.items()) if k.startswith("skipped_")}
    accounted = counts["articles"] + counts["redirects"] + counts["other_namespace"] + sum(skipped.values())
    errors = [{"unit": s["unit"], "error": s["input_error"]} for s in shard_stats if s["input_error"]]
    manifest = {
        "kind": KIND,
        "fingerprint": plan["fingerprint"],
        "complete": not errors and accounted == counts["pages"],
        "inputs": plan["inputs"],
        "config": plan["options"],
        "shards": len(units),
        "counts": {
            "pages": counts["pages"],
            "articles": counts["articles"],
            "redirects": counts["redirects"],
            "other_namespace": counts["other_namespace"],
            "skipped": skipped,
            "disambiguation_kept": counts["disambiguation"],
            "plaintext_fallback": counts["plaintext_fallback"],
            "chunks": counts["chunks"],
            "tokens": counts["tokens"],
            "chunks_below_band": counts["chunks_below_band"],
            "chunks_above_band": counts["chunks_above_band"],
            "invalid_utf8_replacements": counts["invalid_utf8_replacements"],
            "entity_errors": counts["entity_errors"],
            "input_bytes": counts["input_bytes"],
            "wikitext_chars": counts["wikitext_chars"],
        },
        "reconciled": accounted == counts["pages"],
        "input_errors": errors,
        "rebuilt_shards": [{"shard": shard_name(i), "reason": r} for i, r in sorted(rebuilt.items())],
        "durations": {
            "wall_s": round(seconds, 3),
            "shard_s": round(sum(s["seconds"] for s in shard_stats), 3),
        },
        "versions": versions(),
    }
    write_text_atomically(out_dir / MANIFEST, json.dumps(manifest, indent=1))
    return manifest
