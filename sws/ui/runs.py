"""Results directories for the UI: discovery, a cached summary table per run, paged queries, single episodes.

A run's summary (the table columns only: no messages, tools or agent config) is read once and kept until its
part files change (names, sizes or modification times), so a run of thousands of episodes is read from
Parquet once and every later page of its table is a sort, a filter and a slice in memory. One episode with its
whole conversation is read from the one part file that holds its latest record.

A run with an unreadable part file or one of another schema (``f1`` as strings, a corpus Parquet), or a
``run.json`` that is not JSON or is mistyped (``"items": "abc"``), is listed as damaged (which file, why) with
no rows, so the other runs, ``/runs/all`` and the charts still show; ``sws report --repair`` moves a damaged
part aside.

A reference output tree (``<root>/<Dataset>/<model>/<qid>.json``, :mod:`sws.eval.reference_runs`) given or one
level below a given path shows one run per dataset/model folder, read whole (records kept) until the folder's
files change; the files it could not use are listed on its card.
"""

from __future__ import annotations

import math
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sws.eval.records import EpisodeRecord
from sws.eval.reference_runs import (
    ReferenceFolder,
    find_reference_trees,
    read_reference_run,
    reference_folders,
)
from sws.eval.report import RunStats, stats_from_rows
from sws.eval.results import RUN_FILE, DamagedPartError, part_files, read_part
from sws.eval.run_meta import DamagedRunError, read_run_meta

ALL_RUNS = "all"
# (key, label) of the table columns, in display order; every key is sortable
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("dataset", "Dataset"),
    ("model", "Model"),
    ("id", "ID"),
    ("question", "Question"),
    ("answer", "Gold"),
    ("predicted_answer", "Prediction"),
    ("f1", "F1"),
    ("gpt_judge", "Judge"),
    ("status", "Status"),
    ("stop_reason", "Stop reason"),
    ("rounds", "Rounds"),
    ("search_calls", "Search"),
    ("open_calls", "Open"),
    ("total_tokens", "Tokens"),
    ("time_cost", "Runtime (s)"),
)
SORT_KEYS = frozenset(key for key, _ in TABLE_COLUMNS) | {"index", "run"}
SUMMARY_COLUMNS = [key for key, _ in TABLE_COLUMNS] + ["index", "error_type", "answer_aliases"]
PER_PAGE = 50
MAX_PER_PAGE = 500
_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One results directory: a URL-safe ``key``, its path and its ``run.json``; ``reference`` for a folder of
    a reference output tree (its meta then from the folder's names)."""

    key: str
    path: Path
    meta: dict[str, Any]
    reference: ReferenceFolder | None = None

    @property
    def label(self) -> str:
        dataset, model = self.meta.get("dataset") or "?", self.meta.get("model") or "?"
        return f"{dataset} / {model} ({self.meta.get('subset', 'full_test')})"


@dataclass(slots=True)
class RunSummary:
    """The cached summary of one run: rows (table columns + ``run``), where each id's record lives, stats;
    ``damage`` (``parts/NAME: reason`` or ``run.json: reason``) when the run cannot be read, and then no
    rows; for a reference folder its ``records`` by id and ``problems`` (one line per kind of file it could
    not use)."""

    signature: tuple
    rows: list[dict[str, Any]]
    part_of: dict[str, Path]
    stats: RunStats | None
    damage: str = ""
    records: dict[str, EpisodeRecord] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def meta_damaged(self) -> bool:
        """The damage is in ``run.json`` (not in a part file)."""
        return self.damage.startswith(f"{RUN_FILE}:")


@dataclass(frozen=True, slots=True)
class TableQuery:
    """A page of the episodes table: filters, sort and paging (already validated)."""

    sort: str = "index"
    order: str = "asc"
    failed: bool = False
    not_submitted: bool = False
    f1_zero: bool = False
    dataset: str = ""
    q: str = ""
    page: int = 1
    per_page: int = PER_PAGE

    @classmethod
    def parse(cls, params: dict[str, str]) -> TableQuery:
        """From query parameters; unknown sort keys fall back to ``index``, numbers are clamped."""

        def flag(name: str) -> bool:
            return str(params.get(name, "")).strip().lower() in ("1", "true", "on", "yes")

        def number(name: str, default: int, low: int, high: int) -> int:
            try:
                return max(low, min(high, int(str(params.get(name, default)))))
            except ValueError:
                return default

        sort = str(params.get("sort") or "index")
        return cls(
            sort=sort if sort in SORT_KEYS else "index",
            order="desc" if params.get("order") == "desc" else "asc",
            failed=flag("failed"),
            not_submitted=flag("not_submitted"),
            f1_zero=flag("f1_zero"),
            dataset=str(params.get("dataset") or "")[:200],
            q=str(params.get("q") or "")[:500],
            page=number("page", 1, 1, 10**9),
            per_page=number("per_page", PER_PAGE, 1, MAX_PER_PAGE),
        )

    def params(self, **changes: Any) -> dict[str, str]:
        """Query parameters of this query with ``changes`` applied (defaults left out)."""
        merged = {
            "sort": self.sort,
            "order": self.order,
            "failed": self.failed,
            "not_submitted": self.not_submitted,
            "f1_zero": self.f1_zero,
            "dataset": self.dataset,
            "q": self.q,
            "page": self.page,
            "per_page": self.per_page,
        } | changes
        defaults = {"sort": "index", "order": "asc", "page": 1, "per_page": PER_PAGE}
        out: dict[str, str] = {}
        for key, value in merged.items():
            if value is False or value == "" or defaults.get(key) == value:
                continue
            out[key] = "1" if value is True else str(value)
        return out


@dataclass(slots=True)
class TablePage:
    rows: list[dict[str, Any]]
    total: int
    matched: int
    page: int
    pages: int
    datasets: list[str] = field(default_factory=list)


def discover_runs(paths: list[str | Path] | tuple[str | Path, ...]) -> list[RunInfo]:
    """Every results directory at or below ``paths`` (a directory holding ``run.json``), then every folder of
    the reference output trees at or one level below them, with unique keys."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / RUN_FILE).is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(p.parent for p in path.rglob(RUN_FILE))
    folders = [f for tree in find_reference_trees(paths) for f in reference_folders(tree)]
    runs: list[RunInfo] = []
    used: set[str] = {ALL_RUNS}

    def key(name: str) -> str:
        base = _UNSAFE_KEY.sub("-", name).strip("-.") or "run"
        chosen, n = base, 2
        while chosen in used:
            chosen, n = f"{base}-{n}", n + 1
        used.add(chosen)
        return chosen

    for path in dict.fromkeys(p.resolve() for p in found):
        runs.append(RunInfo(key(path.name), path, _read_meta(path)))
    for f in folders:
        meta = {"dataset": f.dataset, "model": f.model, "subset": f.subset}
        runs.append(RunInfo(key(f"{f.dataset}-{f.model}-{f.subset}"), f.path.resolve(), meta, f))
    return runs


class RunStore:
    """The runs the UI shows, with their summaries cached until their part files change. Thread-safe."""

    def __init__(self, paths: list[str | Path] | tuple[str | Path, ...] = ()):
        self.paths = tuple(paths)
        self._lock = threading.Lock()
        self._summaries: dict[Path, RunSummary] = {}
        self.runs: list[RunInfo] = discover_runs(self.paths)

    def refresh(self) -> list[RunInfo]:
        """Discover runs again (new directories below the given paths); keys of known runs are kept."""
        with self._lock:
            found = discover_runs(self.paths)
            if [r.path for r in found] != [r.path for r in self.runs]:
                self.runs = found
            return self.runs

    def get(self, key: str) -> RunInfo | None:
        return next((r for r in self.runs if r.key == key), None)

    def summary(self, run: RunInfo) -> RunSummary:
        """The run's cached summary, read again if its part files changed."""
        signature = _signature(run)
        with self._lock:
            cached = self._summaries.get(run.path)
            if cached is not None and cached.signature == signature:
                return cached
        summary = _read_summary(run, signature)
        with self._lock:
            self._summaries[run.path] = summary
        return summary

    def table(self, key: str, query: TableQuery) -> TablePage:
        """One page of the episodes table of run ``key`` (or of all runs for ``"all"``)."""
        runs = self.runs if key == ALL_RUNS else [r for r in self.runs if r.key == key]
        rows = [row for run in runs for row in self.summary(run).rows]
        datasets = sorted({str(r["dataset"]) for r in rows if r.get("dataset")})
        matched = [r for r in rows if _keep(r, query)]
        matched = sort_rows(matched, query.sort, query.order == "desc")
        pages = max(1, math.ceil(len(matched) / query.per_page))
        page = min(query.page, pages)
        start = (page - 1) * query.per_page
        return TablePage(
            matched[start : start + query.per_page], len(rows), len(matched), page, pages, datasets
        )

    def episode(self, run: RunInfo, episode_id: str) -> EpisodeRecord | None:
        """The latest record of ``episode_id`` in ``run``, with its whole conversation (None if unknown)."""
        if run.reference is not None:
            return self.summary(run).records.get(episode_id)
        path = self.summary(run).part_of.get(episode_id)
        if path is None or not path.is_file():
            return None
        table = read_part(path)
        table = table.filter(pc.equal(table["id"], episode_id))
        if table.num_rows == 0:
            return None
        return EpisodeRecord.from_row(table.slice(table.num_rows - 1).to_pylist()[0])


def sort_rows(rows: list[dict[str, Any]], key: str, descending: bool) -> list[dict[str, Any]]:
    """Stable sort on ``key``; missing values (None, NaN) always last; strings compare case-insensitively."""

    def value(row: dict[str, Any]) -> Any:
        v = row.get(key)
        return v.casefold() if isinstance(v, str) else v

    present = [r for r in rows if not _missing(r.get(key))]
    absent = [r for r in rows if _missing(r.get(key))]
    kinds = {type(value(r)) for r in present}
    if len(kinds) > 1 and not kinds <= {int, float, bool}:
        return sorted(present, key=lambda r: str(value(r)), reverse=descending) + absent
    return sorted(present, key=value, reverse=descending) + absent


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _keep(row: dict[str, Any], query: TableQuery) -> bool:
    if query.failed and row.get("status") != "error":
        return False
    if query.not_submitted and row.get("status") == "submitted":
        return False
    if query.f1_zero and (row.get("f1") or 0.0) != 0.0:
        return False
    if query.dataset and row.get("dataset") != query.dataset:
        return False
    if query.q:
        needle = query.q.casefold()
        haystack = " ".join(str(row.get(k) or "") for k in ("id", "question", "answer", "predicted_answer"))
        if needle not in haystack.casefold():
            return False
    return True


def _signature(run: RunInfo) -> tuple:
    run_dir = run.path
    if run.reference is not None:
        with os.scandir(run_dir) as entries:
            return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries))
    out = []
    for path in part_files(run_dir):
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((path.name, st.st_size, st.st_mtime_ns))
    meta = run_dir / RUN_FILE
    return (meta.stat().st_mtime_ns if meta.is_file() else 0, tuple(out))


def _read_summary(run: RunInfo, signature: tuple) -> RunSummary:
    if run.reference is not None:
        return _reference_summary(run, run.reference, signature)
    try:
        meta = read_run_meta(run.path)
    except DamagedRunError as exc:
        return RunSummary(signature, [], {}, None, f"{RUN_FILE}: {exc.reason}")
    tables, sources = [], []
    for path in part_files(run.path):
        try:
            table = read_part(path, SUMMARY_COLUMNS)
        except DamagedPartError as exc:
            damage = f"{path.relative_to(run.path)}: {exc.reason}"
            return RunSummary(signature, [], {}, None, damage)
        tables.append(table)
        sources += [path] * table.num_rows
    rows = pa.concat_tables(tables, promote_options="default").to_pylist() if tables else []
    last = {row["id"]: i for i, row in enumerate(rows)}  # a later record of an id supersedes an earlier one
    kept = [rows[i] for i in sorted(last.values())]
    for row in kept:
        row["run"] = run.key
    part_of = {rows[i]["id"]: sources[i] for i in last.values()}
    # sws.eval.report.run_stats from the rows already loaded, so opening a run reads its part files once
    return RunSummary(signature, kept, part_of, stats_from_rows(meta, kept))


def _reference_summary(run: RunInfo, folder: ReferenceFolder, signature: tuple) -> RunSummary:
    read = read_reference_run(folder.path, folder.dataset, folder.model, folder.subset)
    rows = []
    for record in read.records:
        row = {key: getattr(record, key) for key in SUMMARY_COLUMNS if hasattr(record, key)}
        scores = record.eval or {}
        row |= {"f1": scores.get("f1"), "gpt_judge": scores.get("gpt_judge")}
        row |= {"total_tokens": record.usage["total_tokens"], "run": run.key}
        rows.append(row)
    records = {r.id: r for r in read.records}
    return RunSummary(signature, rows, {}, read.stats(), records=records, problems=read.problem_lines())


def _read_meta(run_dir: Path) -> dict[str, Any]:
    """``run.json`` for the run's label; {} when it is damaged (its summary says how)."""
    try:
        return read_run_meta(run_dir).model_dump()
    except DamagedRunError:
        return {}
