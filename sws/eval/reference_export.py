"""sws runs written as the reference's per-question output tree, so its own table script and its runner's cache
read them (CONTRACT.md §6.8, §6.10).

Each record becomes ``OUT/<dataset>/<model>/<id>.json`` (``<model>`` the last ``/``-part of the run's model,
as the reference names its folders): :meth:`~sws.eval.records.EpisodeRecord.to_json`, UTF-8 with
``ensure_ascii=False`` and indent 2, written to ``<id>.json.tmp`` and renamed onto ``<id>.json`` as the
reference writes it. An episode that failed (status ``error``) is not written, as the reference writes no
file for one (its runner then runs that question again); an id that cannot be a file name is not written
either. Both are counted and named in the :class:`ExportSummary`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from sws.eval.reference_runs import TMP_SUFFIX
from sws.eval.results import load_records
from sws.eval.run_meta import read_run_meta


@dataclass(slots=True)
class ExportSummary:
    """What an export wrote: files per folder, and ``(run, id, reason)`` of each record it did not write."""

    written: dict[Path, int] = field(default_factory=dict)
    skipped: list[tuple[Path, str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"wrote {n} question file(s) to {folder}" for folder, n in self.written.items()]
        return out + [f"not written: {run} id {qid!r}: {reason}" for run, qid, reason in self.skipped]


def export_reference(run_dirs: list[Path], out_root: str | Path) -> ExportSummary:
    """Write the records of sws results directories ``run_dirs`` under ``out_root`` in the reference's layout.

    Raises:
        DamagedRunError: a ``run.json`` cannot be read.
        DamagedPartError: a part file cannot be read.
    """
    summary = ExportSummary()
    for run_dir in run_dirs:
        meta = read_run_meta(run_dir)
        folder = Path(out_root) / meta.dataset / meta.model.split("/")[-1]
        for record in load_records(run_dir):
            reason = _unwritable(record.id, record.status)
            if reason:
                summary.skipped.append((run_dir, record.id, reason))
                continue
            _write(folder / f"{record.id}.json", json.dumps(record.to_json(), ensure_ascii=False, indent=2))
            summary.written[folder] = summary.written.get(folder, 0) + 1
    return summary


def _unwritable(qid: str, status: str) -> str:
    if status == "error":
        return (
            "the episode failed (the reference writes no file for a failed episode; its runner runs it again)"
        )
    if not qid.strip() or qid in (".", "..") or "/" in qid or "\0" in qid or os.sep in qid:
        return "the id cannot be a file name"
    return ""


def _write(path: Path, text: str) -> None:
    """As the reference writes a result: to ``<name>.json.tmp`` beside it, then renamed onto it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + TMP_SUFFIX)
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
