"""A results directory: ``run.json`` (what was run) and Parquet part files of episode records.

Layout::

    OUT/run.json                                  what was run and on which items (``sws.eval.run_meta``)
    OUT/parts/part-<run>-<worker>-<seq>.parquet   records, each file written to a temp name then renamed

Parts are only ever added. A later record of an id supersedes an earlier one (an errored episode retried on
resume), so :func:`load_records` keeps the last record per id in part-name order.

A part that cannot be read (truncated by a full disk, damaged on copy) or holds no episode records (a column
of another type, a Parquet file of something else) raises :class:`DamagedPartError` naming it and why;
:func:`move_damaged_parts` (``--repair``) moves such parts to ``OUT/damaged/``, never deleting them, so their
episodes count as missing and a resumed run records them again.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sws.eval.datasets import ids_sha256
from sws.eval.records import RECORD_SCHEMA, EpisodeRecord, rows_table, schema_problem
from sws.eval.run_meta import RUN_FILE, RunMeta, read_run_meta, resumed
from sws.io import write_atomically, write_text_atomically

PARTS_DIR = "parts"
DAMAGED_DIR = "damaged"


class DamagedPartError(ValueError):
    """A part file that cannot be read (truncated or corrupt); ``path`` is the file, ``reason`` why."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"damaged part file {path}: {reason}")


def new_run_id() -> str:
    """A sortable id for the part files of one invocation."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


def prepare_run(
    out_dir: str | Path, run: dict[str, Any], ids: Sequence[str] | None = None, extend: bool = False
) -> RunMeta:
    """Write ``run.json``, or check it matches ``run`` on resume; the run's meta as it now stands.

    ``ids``, the selected item ids in order, set ``items`` and ``ids_sha256``; a resume that selects more
    items after the recorded ones is allowed with ``extend`` (recorded under ``extended``).

    Raises:
        RunMismatchError: the existing run differs (``sws.eval.run_meta.resumed`` says how).
        DamagedRunError: the existing ``run.json`` cannot be read or is mistyped.
    """
    out = Path(out_dir)
    if ids is not None:
        run = {**run, "items": len(ids), "ids_sha256": ids_sha256(ids)}
    meta = RunMeta.model_validate(run)
    if (out / RUN_FILE).exists():
        previous = read_run_meta(out)
        meta = resumed(out, previous, meta, ids or (), extend)
        if meta is previous:
            return meta
    (out / PARTS_DIR).mkdir(parents=True, exist_ok=True)
    text = json.dumps(meta.model_dump(), indent=2, sort_keys=True, ensure_ascii=False)
    write_text_atomically(out / RUN_FILE, text)
    return meta


def part_files(out_dir: str | Path, run_id: str = "") -> list[Path]:
    """Part files in write order; only those of one invocation when ``run_id`` is given."""
    return sorted((Path(out_dir) / PARTS_DIR).glob(f"part-{run_id}*.parquet"))


def read_part(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One part file, ``columns`` only (all of :data:`RECORD_SCHEMA` by default).

    Raises:
        DamagedPartError: the file is truncated or otherwise unreadable, or its schema is not a record's.
    """
    try:
        with pq.ParquetFile(path) as part:
            problem = schema_problem(part.schema_arrow)
            if problem is None:
                return part.read(columns=RECORD_SCHEMA.names if columns is None else columns)
    except (pa.ArrowException, OSError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
        raise DamagedPartError(path, reason) from exc
    raise DamagedPartError(path, problem)


def move_damaged_parts(out_dir: str | Path) -> list[Path]:
    """Move every part that cannot be read whole to ``OUT/damaged/``; their new paths."""
    moved = []
    for path in part_files(out_dir):
        try:
            read_part(path)
        except DamagedPartError:
            target = Path(out_dir) / DAMAGED_DIR / path.name
            target.parent.mkdir(exist_ok=True)
            if target.exists():  # never overwrite an earlier one
                target = target.with_name(f"{path.name}.{uuid.uuid4().hex[:6]}")
            path.replace(target)
            moved.append(target)
    return moved


def recorded_status(out_dir: str | Path, run_id: str = "") -> dict[str, str]:
    """id -> status of its latest record (``submitted``, ``max_rounds``, ``context_exhausted`` or ``error``).

    Raises:
        DamagedPartError: a part file cannot be read.
    """
    status: dict[str, str] = {}
    for path in part_files(out_dir, run_id):
        table = read_part(path, ["id", "status"])
        status.update(zip(table["id"].to_pylist(), table["status"].to_pylist()))
    return status


def load_table(out_dir: str | Path, columns: list[str] | None = None) -> pa.Table:
    """All records as one table, the last per id kept, ``columns`` only (all by default).

    Raises:
        DamagedPartError: a part file cannot be read.
    """
    paths = part_files(out_dir)
    if not paths:
        return RECORD_SCHEMA.empty_table().select(columns or RECORD_SCHEMA.names)
    wanted = None if columns is None else list(dict.fromkeys(["id", *columns]))
    table = pa.concat_tables(read_part(p, wanted) for p in paths)
    last = {rid: i for i, rid in enumerate(table["id"].to_pylist())}
    table = table.take(sorted(last.values()))
    return table.select(columns) if columns else table


def load_records(out_dir: str | Path) -> list[EpisodeRecord]:
    """Every record (the last per id), with full trajectories."""
    return [EpisodeRecord.from_row(row) for row in load_table(out_dir).to_pylist()]


class PartWriter:
    """Buffers record rows and writes them as atomic Parquet part files.

    Args:
        out_dir: the results directory.
        prefix: ``<run>-<worker>``, unique per writer.
        rows_per_part: flush when this many rows are buffered.
        max_age_s: flush on the next add when the oldest buffered row is this old.
    """

    def __init__(self, out_dir: str | Path, prefix: str, rows_per_part: int = 64, max_age_s: float = 30.0):
        self.dir = Path(out_dir) / PARTS_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.rows_per_part = rows_per_part
        self.max_age_s = max_age_s
        self._rows: list[dict[str, Any]] = []
        self._since = 0.0
        self._seq = 0

    def add(self, record: EpisodeRecord) -> None:
        if not self._rows:
            self._since = time.monotonic()
        self._rows.append(record.to_row())
        if len(self._rows) >= self.rows_per_part or time.monotonic() - self._since >= self.max_age_s:
            self.flush()

    def flush(self) -> Path | None:
        """Write the buffered rows (if any) to a new part file; returns its path."""
        if not self._rows:
            return None
        table = rows_table(self._rows)
        path = self.dir / f"part-{self.prefix}-{self._seq:05d}.parquet"
        write_atomically(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
        self._seq += 1
        self._rows = []
        return path
