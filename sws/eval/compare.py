"""Two runs question by question (``sws compare A B``): what each question scored, how it ended and what it
cost on each side, and the paired differences summarised with a seeded bootstrap interval.

A side is an sws run (a results directory, or a folder of them) or the reference's output tree
(``<root>/<Dataset>/<model>/<qid>.json``); questions are matched by dataset and id, and a question present on
one side only is listed, never dropped. Deltas are B − A.

Project decisions:

- A question *differs* when its answer, F1, EM, judge verdict, stop reason, rounds, search calls or open calls
  differ. Tokens and runtime are compared (their Δ is in the tables) but never make a question differ: runtime
  changes with every run, and the tokens a service counts can too.
- A score a record lacks (no ``eval``: an errored episode; no ``gpt_judge``: no judge ran) is counted and named
  per side and field, never a difference; the paired means are over the questions where both sides have it
  (``n`` says how many).
- Judge flips are counted both ways: ``0→1`` (A wrong, B right) and ``1→0``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sws.eval.records import EpisodeRecord

# what a question's row shows of each side: name -> value of a record (None: the record lacks it)
FIELDS: dict[str, Callable[[EpisodeRecord], Any]] = {
    "answer": lambda r: r.predicted_answer,
    "f1": lambda r: (r.eval or {}).get("f1"),
    "em": lambda r: (r.eval or {}).get("em"),
    "judge": lambda r: (r.eval or {}).get("gpt_judge"),
    "stop_reason": lambda r: r.stop_reason,
    "rounds": lambda r: r.rounds,
    "search_calls": lambda r: r.search_calls,
    "open_calls": lambda r: r.open_calls,
    "total_tokens": lambda r: r.usage.get("total_tokens"),
    "runtime_s": lambda r: r.time_cost,
}
METRICS = ("f1", "em", "judge", "rounds", "search_calls", "open_calls", "total_tokens", "runtime_s")
DIFFERS_ON = ("answer", "f1", "em", "judge", "stop_reason", "rounds", "search_calls", "open_calls")
SCORES = ("f1", "em", "judge")  # the fields whose absence is counted and named
JUDGE_FLIPS = {"0→1": (0, 1), "1→0": (1, 0)}  # A's verdict → B's
ALL = "all"


class CompareError(ValueError):
    """An input that cannot be compared (missing, empty, unreadable, nothing in common); one line."""


@dataclass(frozen=True, slots=True)
class Side:
    """One side's records keyed by (dataset, id), and what could not be read from it.

    Args:
        path: what was named on the command line.
        kind: ``sws run`` or ``reference tree``.
        records: (dataset, id) -> record.
        problems: each file or record skipped, with why (counted and named in the output).
    """

    path: str
    kind: str
    records: dict[tuple[str, str], EpisodeRecord]
    problems: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return sorted({r.model for r in self.records.values()})


@dataclass(frozen=True, slots=True)
class QuestionDiff:
    """One question: its values on each side (None where absent) and the fields that differ."""

    dataset: str
    id: str
    a: dict[str, Any] | None
    b: dict[str, Any] | None

    @property
    def differs(self) -> list[str]:
        """The fields of :data:`DIFFERS_ON` that differ; a score one side lacks is missing, not different."""
        if self.a is None or self.b is None:
            return []
        return [
            k
            for k in DIFFERS_ON
            if self.a[k] != self.b[k] and not (k in SCORES and None in (self.a[k], self.b[k]))
        ]

    def delta(self, metric: str) -> float | None:
        if self.a is None or self.b is None or self.a[metric] is None or self.b[metric] is None:
            return None
        return float(self.b[metric]) - float(self.a[metric])


@dataclass(frozen=True, slots=True)
class MetricDelta:
    """A metric's paired mean over ``n`` questions, and the bootstrap interval of ``mean_delta``."""

    n: int
    mean_a: float | None
    mean_b: float | None
    mean_delta: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """The summary of one dataset (or of ``all``)."""

    questions_a: int
    questions_b: int
    paired: int
    only_a: int
    only_b: int
    differing: int
    stop_reason_changes: int
    judge_flips: dict[str, int]
    metrics: dict[str, MetricDelta]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Everything ``sws compare`` reports; ``groups`` has one entry per dataset, plus ``all`` for several."""

    a: Side
    b: Side
    questions: list[QuestionDiff]
    groups: dict[str, GroupSummary]
    missing: dict[str, dict[str, list[str]]]  # side ("A"/"B") -> field -> "dataset/id" lacking it
    seed: int
    resamples: int

    @property
    def only_a(self) -> list[QuestionDiff]:
        return [q for q in self.questions if q.b is None]

    @property
    def only_b(self) -> list[QuestionDiff]:
        return [q for q in self.questions if q.a is None]

    @property
    def differing(self) -> list[QuestionDiff]:
        return [q for q in self.questions if q.differs]


def load_side(path: str | Path, model: str | None = None) -> Side:
    """The records at ``path``: every sws run at or below it (``run.json``), else a reference output tree (or
    one ``<Dataset>/<model>`` folder of one); ``model`` keeps that model's only (a tree's model folder name
    or the records' model).

    Raises:
        CompareError: ``path`` is missing or not a folder, holds neither, cannot be read, or holds no records
            (of ``model``).
    """
    from sws.eval.reference_runs import is_reference_path, read_reference
    from sws.eval.report import find_runs
    from sws.eval.results import DamagedPartError, load_records

    path = Path(path)
    if not path.is_dir():
        raise CompareError(f"{path}: {'not a folder' if path.exists() else 'no such folder'}")
    runs = find_runs([path])
    if runs:
        try:
            records = [r for run in runs for r in load_records(run) if model in (None, r.model)]
        except (DamagedPartError, OSError) as exc:
            raise CompareError(f"{path}: {exc}") from exc
        return side_from_records(path, "sws run", records, model=model)
    if is_reference_path(path):
        try:
            tree = read_reference(path)
        except OSError as exc:
            raise CompareError(f"{path}: {exc}") from exc
        chosen = [
            run
            for run in tree.runs
            if model is None or run.model == model or any(r.model == model for r in run.records)
        ]
        records = [r for run in chosen for r in run.records]
        problems = [line for run in chosen for line in run.problem_lines()]
        return side_from_records(path, "reference tree", records, problems, model)
    raise CompareError(
        f"{path} holds neither an sws run (run.json) nor a reference output tree (<Dataset>/<model>/<qid>.json)"
    )


def side_from_records(
    path: str | Path,
    kind: str,
    records: Iterable[EpisodeRecord],
    problems: Sequence[str] = (),
    model: str | None = None,
) -> Side:
    """A side of ``records`` in (dataset, id) order; a second record of a (dataset, id) is a problem, named
    (the first is kept).

    Raises:
        CompareError: no records (of ``model``), or records of several models (a question would be matched
            twice).
    """
    records = list(records)
    models = sorted({r.model for r in records})
    if len(models) > 1:
        raise CompareError(
            f"{path} holds runs of several models ({', '.join(models)}): pick one with --model, or name one "
            "model's run or <Dataset>/<model> folder"
        )
    keyed: dict[tuple[str, str], EpisodeRecord] = {}
    found = list(problems)
    for record in records:
        key = (record.dataset, record.id)
        if key in keyed:
            found.append(f"{record.dataset}/{record.id}: recorded twice (two runs of it); kept the first")
        else:
            keyed[key] = record
    if not keyed:
        raise CompareError(f"{path}: no episode records{f' of model {model}' if model else ''} to compare")
    return Side(str(path), kind, dict(sorted(keyed.items(), key=lambda kv: _natural(kv[0]))), found)


def compare_sides(a: Side, b: Side, seed: int = 42, resamples: int = 10_000) -> Comparison:
    """Match ``a`` and ``b`` question by question and summarise per dataset.

    Raises:
        CompareError: the two sides share no dataset.
    """
    datasets_a = {d for d, _ in a.records}
    datasets_b = {d for d, _ in b.records}
    if not datasets_a & datasets_b:
        raise CompareError(
            f"A and B share no dataset (A: {', '.join(sorted(datasets_a))}; B: {', '.join(sorted(datasets_b))})"
        )
    keys = sorted(a.records.keys() | b.records.keys(), key=_natural)
    questions = [
        QuestionDiff(d, qid, _values(a.records.get((d, qid))), _values(b.records.get((d, qid))))
        for d, qid in keys
    ]
    datasets = sorted(datasets_a | datasets_b)
    groups = {d: _summary([q for q in questions if q.dataset == d], seed, resamples) for d in datasets}
    if len(datasets) > 1:
        groups[ALL] = _summary(questions, seed, resamples)
    missing = {name: _missing(side) for name, side in (("A", a), ("B", b))}
    return Comparison(a, b, questions, groups, missing, seed, resamples)


def paired_bootstrap(
    deltas: Sequence[float], seed: int, resamples: int = 10_000, level: float = 0.95
) -> tuple[float, float]:
    """The percentile interval of the mean of ``deltas`` over ``resamples`` resamples drawn with
    ``numpy.random.default_rng(seed)`` (questions resampled with replacement, so each pair stays together)."""
    values = np.asarray(deltas, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, 2_000_000 // max(1, len(values)))  # bound the index block's memory
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        means[start:stop] = values[rng.integers(0, len(values), (stop - start, len(values)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def _natural(key: tuple[str, str]) -> tuple:
    """(dataset, id) with the id's digit runs as numbers: ``test_2`` before ``test_10``."""
    return key[0], [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", key[1])]


def _values(record: EpisodeRecord | None) -> dict[str, Any] | None:
    return None if record is None else {name: get(record) for name, get in FIELDS.items()}


def _summary(questions: list[QuestionDiff], seed: int, resamples: int) -> GroupSummary:
    paired = [q for q in questions if q.a is not None and q.b is not None]
    flips = {
        flip: sum((q.a["judge"], q.b["judge"]) == pair for q in paired) for flip, pair in JUDGE_FLIPS.items()
    }
    return GroupSummary(
        questions_a=sum(q.a is not None for q in questions),
        questions_b=sum(q.b is not None for q in questions),
        paired=len(paired),
        only_a=sum(q.b is None for q in questions),
        only_b=sum(q.a is None for q in questions),
        differing=sum(bool(q.differs) for q in paired),
        stop_reason_changes=sum(q.a["stop_reason"] != q.b["stop_reason"] for q in paired),
        judge_flips=flips,
        metrics={m: _metric(paired, m, seed, resamples) for m in METRICS},
    )


def _metric(paired: list[QuestionDiff], metric: str, seed: int, resamples: int) -> MetricDelta:
    both = [q for q in paired if q.delta(metric) is not None]
    if not both:
        return MetricDelta(0, None, None, None, None, None)
    deltas = [q.delta(metric) for q in both]
    low, high = paired_bootstrap(deltas, seed, resamples)
    return MetricDelta(
        n=len(both),
        mean_a=float(np.mean([q.a[metric] for q in both])),
        mean_b=float(np.mean([q.b[metric] for q in both])),
        mean_delta=float(np.mean(deltas)),
        ci_low=low,
        ci_high=high,
    )


def _missing(side: Side) -> dict[str, list[str]]:
    """field -> "dataset/id" of the records of ``side`` that lack it (fields lacked by none left out)."""
    lacking: dict[str, list[str]] = {}
    for (dataset, qid), record in side.records.items():
        for name in SCORES:
            if FIELDS[name](record) is None:
                lacking.setdefault(name, []).append(f"{dataset}/{qid}")
    return lacking
