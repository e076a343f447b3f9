"""The paper's published per-question outputs read as sws runs (CONTRACT.md §6.10, §8.1).

The reference runner writes one ``<qid>.json`` per finished question, in a tree
``<root>/<Dataset>/<model>/<qid>.json`` (``output_full_test/``, ``output_sample_random_300/``). This module
reads such a tree, or one ``<Dataset>/<model>`` folder of it, into sws's own
:class:`~sws.eval.records.EpisodeRecord` s, so ``sws report``, ``sws compare`` and ``sws ui`` use it like an
sws run.

API:

- :func:`read_reference` ``(path)`` -> :class:`ReferenceTree`: a whole tree or one dataset/model folder. Its
  ``runs`` are :class:`ReferenceRun` s, one per ``(dataset, model)`` folder, each with ``records`` (files
  named ``<id>.json`` first, then by file name; ``index`` is that position; of files sharing an id the first
  is read), ``problems`` (:class:`ReferenceProblem`: ``kind``, ``path``,
  ``detail``, ``skipped``), and the reference script's own aggregate: ``files`` (its ``n``: ``.json``
  files present), ``f1_sum`` and ``judge_sum`` over them, in directory order, missing values 0.
  :meth:`ReferenceTree.problem_lines` / :meth:`ReferenceRun.problem_lines` are the one-line-per-kind
  summaries callers print.
- :func:`find_reference_trees` ``(paths)``: the trees at or one level below ``paths``;
  :func:`is_reference_path` says whether a directory is a tree or a dataset/model folder;
  :func:`reference_folders` lists a tree's dataset/model folders (:class:`ReferenceFolder`) without reading
  them, and :func:`read_reference_run` reads one.
- :func:`record_from_reference` ``(obj, dataset, index)``: one parsed ``{qid}.json`` object as a record.

Mapping: ``id``, ``type``, ``question``, ``answer`` (``str``; ``""`` when the item had no gold),
``answer_aliases``, ``model`` (as recorded), ``messages``, ``tools``, ``predicted_answer``, ``stop_reason``,
``time_cost``, ``usage`` and ``eval`` are taken as written. The reference stores no counts, so they are
computed from the messages (:func:`message_counts`, CONTRACT.md §8.2): ``rounds`` = assistant messages,
search / open / submit / unknown calls = the assistant messages' ``tool_calls`` by name, ``tool_errors`` =
tool messages whose content is a JSON object with ``"status": "error"``, ``nudges`` = user messages right
after an assistant message, ``llm_time_s`` / ``tool_time_s`` = the messages' ``duration_s`` summed.
``status`` follows ``stop_reason`` (``submitted``, ``max_rounds``, ``context_exhausted``; anything else is
``error`` with the stop reason as its message). Not stored by the reference, so fixed: ``seed`` -1,
``dropped_tool_calls`` 0 (the reference keeps only the capped calls), ``llm_retries`` 0, ``fingerprint``
``""``, ``agent_config`` ``{}``.

Bad input is never a traceback and never a silent skip: each file is a :class:`ReferenceProblem` of one of
:data:`PROBLEMS` (a leftover ``.json.tmp``, bytes that are not UTF-8, JSON that is truncated or not an
object, no id, an id already read from another file, ``eval: null``, no ``gpt_judge``, ...). Unreadable
files still count in ``files`` (the script's ``n``) with 0: where the reference script stops with a
traceback, sws names the file and goes on.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sws.agent.episode import STOP_CONTEXT_EXHAUSTED, STOP_MAX_ROUNDS, STOP_SUBMITTED
from sws.env import TOOL_NAMES
from sws.eval.paper_datasets import PAPER_DATASETS
from sws.eval.records import EpisodeRecord
from sws.eval.registry import registered_datasets
from sws.eval.report import RunStats, model_key, stats_from_rows
from sws.eval.results import RUN_FILE
from sws.eval.run_meta import RunMeta

REFERENCE_DATASETS = tuple(d.name for d in PAPER_DATASETS)  # the script's columns, in its order
TMP_SUFFIX = ".json.tmp"
_STATUS = {
    STOP_SUBMITTED: "submitted",
    STOP_MAX_ROUNDS: "max_rounds",
    STOP_CONTEXT_EXHAUSTED: "context_exhausted",
}
_SUBSETS = {"output_full_test": "full_test", "output_sample_random_300": "random_300"}
_SHOWN = 3  # file names shown per problem kind

# kind -> what it means (and whether the file gave a record)
PROBLEMS = {
    "leftover_tmp": "leftover .json.tmp (an interrupted write; not read)",
    "not_utf8": "not UTF-8 (not read; 0 in the reference table)",
    "bad_json": "not JSON, e.g. truncated (not read; 0 in the reference table)",
    "not_object": "JSON but not an object (not read; 0 in the reference table)",
    "no_id": "no id (not read; the reference runner deletes it and runs the question again)",
    "duplicate_id": "id already read from another file (not read again; still in the reference table)",
    "id_not_file_name": "id differs from the file name (read; the reference runner looks for <id>.json)",
    "eval_null": "eval is null (read; F1 and judge 0)",
    "bad_eval": "eval is not an object of numbers (read; F1 and judge 0)",
    "no_judge": "no gpt_judge in eval (read; judge 0)",
    "bad_field": "a field of the wrong type (read; the field left empty)",
    "unknown_stop_reason": "a stop reason sws does not know (read as status error)",
    "other_entry": "neither a .json file nor a .json.tmp (not read)",
}


@dataclass(frozen=True, slots=True)
class ReferenceProblem:
    """One file of a reference folder that is not a clean record: ``kind`` (a key of :data:`PROBLEMS`),
    the file, what exactly, and whether it gave no record (``skipped``)."""

    kind: str
    path: Path
    detail: str
    skipped: bool


@dataclass(slots=True)
class ReferenceRun:
    """One ``<Dataset>/<model>`` folder: its records and problems, and the reference script's aggregate
    (``files`` = its ``n``, sums over those files in directory order, missing values 0)."""

    path: Path
    dataset: str
    model: str
    subset: str
    records: list[EpisodeRecord] = field(default_factory=list)
    problems: list[ReferenceProblem] = field(default_factory=list)
    files: int = 0
    f1_sum: float = 0.0
    judge_sum: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.dataset} / {self.model} ({self.subset})"

    def meta(self) -> RunMeta:
        """A ``run.json`` for it: ``items`` is the files present, so an unread file counts 0 in sws's tables."""
        return RunMeta(
            dataset=self.dataset,
            subset=self.subset,
            model=self.model,
            agent_config={},
            fingerprint="",
            items=self.files,
        )

    def stats(self) -> RunStats:
        """sws's statistics of it (its tables' denominators are the files present)."""
        return stats_from_rows(self.meta(), [_stats_row(r) for r in self.records])

    def problem_lines(self) -> list[str]:
        """One line per kind of problem: how many files, the first names, what it means."""
        lines = []
        for kind, n in Counter(p.kind for p in self.problems).items():
            names = [p.path.name for p in self.problems if p.kind == kind]
            shown = ", ".join(names[:_SHOWN]) + (f" and {n - _SHOWN} more" if n > _SHOWN else "")
            lines.append(f"{self.path}: {n} file(s) {PROBLEMS[kind]}: {shown}")
        return lines


@dataclass(slots=True)
class ReferenceTree:
    """A reference output tree (or one folder of it): ``runs`` per (dataset, model) folder; ``models`` are the
    model folder names in the reference script's row order."""

    root: Path
    subset: str
    runs: list[ReferenceRun]
    models: tuple[str, ...]

    def problem_lines(self) -> list[str]:
        return [line for run in self.runs for line in run.problem_lines()]


def is_reference_path(path: str | Path) -> bool:
    """Whether ``path`` is a reference tree (a folder of dataset folders) or one dataset/model folder of one."""
    path = Path(path)
    if not path.is_dir() or (path / RUN_FILE).exists():
        return False
    return _is_tree(path) or (path.parent.name in registered_datasets() and path in _model_dirs(path.parent))


def find_reference_trees(paths: list[str | Path] | tuple[str | Path, ...]) -> list[Path]:
    """Reference trees and dataset/model folders given, or trees one level below the paths given."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if is_reference_path(path):
            found.append(path)
        elif path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_dir() and _is_tree(p))
    return list(dict.fromkeys(found))


def read_reference(path: str | Path) -> ReferenceTree:
    """A whole reference tree, or one ``<Dataset>/<model>`` folder of one (then a tree of that one run).

    Raises:
        ValueError: ``path`` is neither (:func:`is_reference_path`).
    """
    path = Path(path)
    folders = reference_folders(path)
    models = tuple(sorted({f.model for f in folders}, key=model_key))
    runs = [read_reference_run(f.path, f.dataset, f.model, f.subset) for f in folders]
    return ReferenceTree(path, _subset(path if _is_tree(path) else path.parent.parent), runs, models)


@dataclass(frozen=True, slots=True)
class ReferenceFolder:
    """Where one (dataset, model) folder of a reference tree is, not yet read."""

    path: Path
    dataset: str
    model: str
    subset: str


def reference_folders(path: str | Path) -> list[ReferenceFolder]:
    """The dataset/model folders of a tree (datasets in registry order, models in the reference script's
    order), or the one folder given, without reading them.

    Raises:
        ValueError: ``path`` is neither a tree nor such a folder (:func:`is_reference_path`).
    """
    path = Path(path)
    if not is_reference_path(path):
        raise ValueError(
            f"{path} is not a reference output tree (<root>/<Dataset>/<model>/<qid>.json) nor a "
            f"<Dataset>/<model> folder of one (datasets: {', '.join(registered_datasets())})"
        )
    if not _is_tree(path):
        return [ReferenceFolder(path, path.parent.name, path.name, _subset(path.parent.parent))]
    datasets = [d for d in registered_datasets() if (path / d).is_dir()]
    folders = {(d, m.name) for d in datasets for m in _model_dirs(path / d)}
    models = sorted({m for _, m in folders}, key=model_key)
    subset = _subset(path)
    return [
        ReferenceFolder(path / d / m, d, m, subset) for d in datasets for m in models if (d, m) in folders
    ]


def read_reference_run(path: Path, dataset: str, model: str, subset: str) -> ReferenceRun:
    """One dataset/model folder: the reference script's sums over its ``.json`` files in directory order (so
    its float sums are reproduced to the last bit), records in file-name order, every other entry a named
    problem."""
    run = ReferenceRun(path, dataset, model, subset)
    loaded: list[tuple[Path, dict[str, Any]]] = []
    with os.scandir(path) as entries:
        for entry in entries:
            entry_path = Path(entry.path)
            if not (entry.is_file() and entry.name.endswith(".json")):
                kind = "leftover_tmp" if entry.name.endswith(TMP_SUFFIX) else "other_entry"
                run.problems.append(ReferenceProblem(kind, entry_path, "", True))
                continue
            run.files += 1
            obj = _load(entry_path, run.problems)
            f1, judge = _script_scores(obj)
            run.f1_sum += f1
            run.judge_sum += judge
            if obj is not None:
                loaded.append((entry_path, obj))
    seen: dict[str, Path] = {}
    for entry_path, obj in sorted(loaded, key=_record_order):
        _record(run, entry_path, obj, seen)
    run.problems.sort(key=lambda p: p.path.name)
    return run


def _stats_row(record: EpisodeRecord) -> dict[str, Any]:
    """The columns :func:`~sws.eval.report.stats_from_rows` reads."""
    scores = record.eval or {}
    return {
        "f1": scores.get("f1"),
        "gpt_judge": scores.get("gpt_judge"),
        "status": record.status,
        "rounds": record.rounds,
        "search_calls": record.search_calls,
        "open_calls": record.open_calls,
        "total_tokens": record.usage["total_tokens"],
        "time_cost": record.time_cost,
    }


def _record_order(pair: tuple[Path, dict[str, Any]]) -> tuple[bool, str]:
    """Files named after their id first (the one the reference runner's cache reads wins a duplicate id),
    then by name."""
    path, obj = pair
    return str(obj.get("id") or "").strip() != path.stem, path.name


def _load(path: Path, problems: list[ReferenceProblem]) -> dict[str, Any] | None:
    """The file's JSON object, or None with the problem recorded."""
    try:
        obj = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        problems.append(ReferenceProblem("not_utf8", path, f"byte {exc.start}", True))
        return None
    except json.JSONDecodeError as exc:
        problems.append(ReferenceProblem("bad_json", path, f"{exc.msg} at line {exc.lineno}", True))
        return None
    if not isinstance(obj, dict):
        problems.append(ReferenceProblem("not_object", path, type(obj).__name__, True))
        return None
    return obj


def _script_scores(obj: dict[str, Any] | None) -> tuple[float, float]:
    """What the reference script adds for one file: ``eval.f1`` and ``eval.gpt_judge``, missing values 0;
    an unreadable file or a value that is not a number adds 0 (the problem is named by the record pass)."""
    metrics = (obj or {}).get("eval") or {}
    try:
        f1, judge = metrics.get("f1"), metrics.get("gpt_judge")
        return (0.0 if f1 is None else float(f1)), (0.0 if judge is None else float(judge))
    except (ValueError, TypeError, AttributeError):
        return 0.0, 0.0


def _record(run: ReferenceRun, path: Path, obj: dict[str, Any], seen: dict[str, Path]) -> None:
    problems = run.problems
    qid = str(obj.get("id") or "").strip()
    if not qid:
        problems.append(ReferenceProblem("no_id", path, "", True))
        return
    if qid in seen:
        problems.append(ReferenceProblem("duplicate_id", path, f"{qid!r} is also in {seen[qid].name}", True))
        return
    seen[qid] = path
    if path.stem != qid:
        problems.append(ReferenceProblem("id_not_file_name", path, f"id {qid!r}", False))
    record, notes = record_from_reference(obj, run.dataset, len(run.records))
    problems += [ReferenceProblem(kind, path, detail, False) for kind, detail in notes]
    run.records.append(record)


def record_from_reference(
    obj: dict[str, Any], dataset: str, index: int
) -> tuple[EpisodeRecord, list[tuple[str, str]]]:
    """One reference ``{qid}.json`` object (with an ``id``) as a record, and its problems as
    ``(kind, detail)`` pairs (kinds of :data:`PROBLEMS`)."""
    notes: list[tuple[str, str]] = []

    def typed(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        value = obj.get(key, default)
        if value is None and default is None:
            return None
        if not isinstance(value, kind):
            notes.append(("bad_field", f"{key} is {type(value).__name__}"))
            return default
        return value

    messages = [m for m in typed("messages", list, []) if isinstance(m, dict)]
    usage = typed("usage", dict, {})
    stop_reason = typed("stop_reason", str, None)
    status = _STATUS.get(stop_reason or "", "error")
    if status == "error":
        notes.append(("unknown_stop_reason", repr(stop_reason)))
    answer = obj.get("answer")
    record = EpisodeRecord(
        id=str(obj["id"]).strip(),
        dataset=dataset,
        type=str(obj.get("type") or ""),
        question=str(typed("question", str, "")),
        answer="" if answer is None else str(answer),
        answer_aliases=[str(a) for a in typed("answer_aliases", list, [])],
        model=str(typed("model", str, "")),
        messages=messages,
        tools=typed("tools", list, []),
        predicted_answer=str(obj.get("predicted_answer") or ""),
        stop_reason=stop_reason,
        time_cost=float(typed("time_cost", (int, float), 0.0)),
        usage={k: int(usage.get(k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
        eval=_eval(obj, notes),
        status=status,
        error_type="UnknownStopReason" if status == "error" else None,
        error=f"stop_reason {stop_reason!r}" if status == "error" else None,
        index=index,
        seed=-1,
        dropped_tool_calls=0,
        llm_retries=0,
        fingerprint="",
        agent_config={},
        **message_counts(messages),
    )
    return record, notes


def _eval(obj: dict[str, Any], notes: list[tuple[str, str]]) -> dict[str, float] | None:
    scores = obj.get("eval")
    if scores is None:
        notes.append(("eval_null", ""))
        return None
    if not isinstance(scores, dict) or not all(
        isinstance(v, (int, float)) for k, v in scores.items() if k in ("f1", "gpt_judge")
    ):
        notes.append(("bad_eval", json.dumps(scores)[:80]))
        return None
    if "gpt_judge" not in scores:
        notes.append(("no_judge", ""))
    return {
        k: (int(v) if k == "gpt_judge" else float(v))
        for k, v in scores.items()
        if isinstance(v, (int, float))
    }


def message_counts(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool-use counts of a record, from its messages (CONTRACT.md §8.2; the module docstring says how)."""
    calls: Counter[str] = Counter()
    counts = {"rounds": 0, "tool_errors": 0, "nudges": 0, "llm_time_s": 0.0, "tool_time_s": 0.0}
    previous = ""
    for message in messages:
        role = message.get("role")
        duration = message.get("duration_s")
        seconds = float(duration) if isinstance(duration, (int, float)) else 0.0
        if role == "assistant":
            counts["rounds"] += 1
            counts["llm_time_s"] += seconds
            calls.update(_call_name(c) for c in message.get("tool_calls") or [] if isinstance(c, dict))
        elif role == "tool":
            counts["tool_time_s"] += seconds
            counts["tool_errors"] += _is_error(message.get("content"))
        elif role == "user" and previous == "assistant":
            counts["nudges"] += 1
        previous = role
    return counts | {
        "search_calls": calls["search"],
        "open_calls": calls["open_url"],
        "submit_calls": calls["submit_answer"],
        "unknown_tool_calls": sum(
            n for name, n in calls.items() if name not in TOOL_NAMES
        ),  # the reference has these
    }


def _call_name(call: dict[str, Any]) -> str:
    function = call.get("function")
    return str((function or {}).get("name") or "").strip() if isinstance(function, dict) else ""


def _is_error(content: Any) -> bool:
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("status") == "error"


def _is_tree(path: Path) -> bool:
    """A folder of dataset folders of which one holds a model folder that is not an sws run."""
    return any(_model_dirs(path / d) for d in registered_datasets() if (path / d).is_dir())


def _model_dirs(dataset_dir: Path) -> list[Path]:
    """The model folders of a dataset folder (none where it is an sws results directory itself; sws results
    directories in it are not)."""
    if (dataset_dir / RUN_FILE).exists():
        return []
    return [m for m in dataset_dir.iterdir() if m.is_dir() and not (m / RUN_FILE).exists()]


def _subset(root: Path) -> str:
    """``output_full_test`` -> ``full_test``, ``output_sample_random_300`` -> ``random_300``, else its name."""
    return _SUBSETS.get(root.name, root.name)
