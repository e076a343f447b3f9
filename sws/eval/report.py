"""The paper's tables from results directories: scores (Tables 3/4) and tool-use statistics (Tables 5/6).

Project decisions (the reference computes no tool-use statistics, CONTRACT.md §8.2):

- Denominators are the selected dataset size (``items`` in ``run.json``, never fewer than the episodes
  recorded): a missing or failed episode counts 0 for F1, Judge and the submit rate, and the failure counts
  are printed beside the scores.
- Rounds, search / open calls, total tokens and runtime are means over the recorded episodes (errored ones
  included, with what they did before failing); ``n`` says how many there were.
- The submit rate is the share of the dataset that ended with ``submit_answer``.
- An episode whose history outgrew the model's context (``context_exhausted``) is a recorded outcome with no
  answer (0 for F1 and Judge), never run again; the tables' notes count them.
- A damaged part file stops the report (``DamagedPartError``); ``sws report --repair`` moves it to
  ``<run>/damaged/`` and its episodes count as missing until ``sws eval`` resumes that run.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from sws.eval.metrics import NO_JUDGE, judge_accuracy
from sws.eval.registry import dataset_label, registered_datasets
from sws.eval.results import RUN_FILE, load_table
from sws.eval.run_meta import RunMeta, read_run_meta

MODEL_ORDER = (
    "Ministral-3-8B-Instruct-2512-BF16",
    "Qwen3.5-4B",
    "Qwen3.5-9B",
    "gemma-4-12B-it",
    "deepseek-v4-pro",
    "gpt-5.4",
)
MODEL_LABELS = {"gpt-5.4": "gpt-5.4-2026-03-05"}
_COLUMNS = ["f1", "gpt_judge", "status", "rounds", "search_calls", "open_calls", "total_tokens", "time_cost"]


@dataclass(frozen=True, slots=True)
class RunStats:
    """One results directory summarised; scores and ``submit_rate`` are fractions of ``n``."""

    dataset: str
    subset: str
    model: str
    n: int
    recorded: int
    errored: int
    missing: int
    context_exhausted: int
    f1: float
    judge: float | None  # None: no episode has a judge verdict (no judge ran)
    submit_rate: float
    rounds: float
    search_calls: float
    open_calls: float
    total_tokens: float
    runtime_s: float


def run_stats(out_dir: str | Path) -> RunStats:
    """Summarise one results directory (it must hold ``run.json``).

    Raises:
        DamagedRunError: its ``run.json`` cannot be read or is mistyped.
        DamagedPartError: a part file cannot be read.
    """
    return stats_from_rows(read_run_meta(out_dir), load_table(out_dir, _COLUMNS).to_pylist())


def stats_from_rows(run: RunMeta, rows: list[dict]) -> RunStats:
    """The statistics of a run from its ``run.json`` and its recorded rows (one per episode, with the
    record columns ``f1``, ``gpt_judge``, ``status``, ``rounds``, ``search_calls``, ``open_calls``,
    ``total_tokens``, ``time_cost``). Every count is of those rows: a ``run.json`` selecting fewer items
    (written before runs had an identity, when other inputs could be mixed in) never makes a rate exceed 1."""
    recorded = len(rows)
    n = max(run.items or 0, recorded)

    def mean(key: str) -> float:
        return sum(r.get(key) or 0 for r in rows) / recorded if recorded else 0.0

    return RunStats(
        dataset=run.dataset,
        subset=run.subset,
        model=run.model,
        n=n,
        recorded=recorded,
        errored=sum(r.get("status") == "error" for r in rows),
        missing=n - recorded,
        context_exhausted=sum(r.get("status") == "context_exhausted" for r in rows),
        f1=sum(r.get("f1") or 0.0 for r in rows) / n if n else 0.0,
        judge=judge_accuracy((r.get("gpt_judge") for r in rows), n),
        submit_rate=sum(r.get("status") == "submitted" for r in rows) / n if n else 0.0,
        rounds=mean("rounds"),
        search_calls=mean("search_calls"),
        open_calls=mean("open_calls"),
        total_tokens=mean("total_tokens"),
        runtime_s=mean("time_cost"),
    )


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Every results directory at or below ``paths`` (any directory holding ``run.json``), sorted."""
    return sorted({p.parent for path in paths for p in Path(path).rglob(RUN_FILE)})


def collect(paths: Iterable[str | Path]) -> list[RunStats]:
    """Stats of every results directory at or below ``paths``.

    Raises:
        DamagedPartError: a part file cannot be read.
    """
    return [run_stats(d) for d in find_runs(paths)]


def model_key(model: str) -> tuple[int, str]:
    """Row order of models: the paper's (and the reference script's) fixed ranking, then by name."""
    return (MODEL_ORDER.index(model) if model in MODEL_ORDER else len(MODEL_ORDER), model)


@dataclass(frozen=True, slots=True)
class Table:
    """A rendered-independent table: a title, column names, rows of cells, and notes (failures)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str]

    def markdown(self) -> str:
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(self.columns) - 1)) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        lines += [""] + [f"- {note}" for note in self.notes] if self.notes else []
        return "\n".join(lines) + "\n"

    def latex(self) -> str:
        escape = str.maketrans({"&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#"})
        head = " & ".join(c.translate(escape) for c in self.columns)
        body = "\n".join(" & ".join(c.translate(escape) for c in row) + r" \\" for row in self.rows)
        spec = "l" + "r" * (len(self.columns) - 1)
        caption = self.title.translate(escape)
        return (
            f"\\begin{{table}}[t]\n\\centering\n\\caption{{{caption}}}\n\\begin{{tabular}}{{{spec}}}\n\\hline\n"
            f"{head} \\\\\n\\hline\n{body}\n\\hline\n\\end{{tabular}}\n\\end{{table}}\n"
        )


def score_table(stats: Sequence[RunStats], subset: str) -> Table:
    """Tables 3/4: per model, ``n | F1 | Judge`` for each dataset (scores x100, 2 decimals; ``-`` if no run)."""
    cells = {(s.model, s.dataset): s for s in stats if s.subset == subset}
    datasets = [d for d in registered_datasets() if any(ds == d for _, ds in cells)]
    models = sorted({m for m, _ in cells}, key=model_key)
    columns = ["Model"] + [f"{dataset_label(d)} {c}" for d in datasets for c in ("n", "F1", "Judge")]
    rows = []
    for model in models:
        row = [MODEL_LABELS.get(model, model)]
        for d in datasets:
            s = cells.get((model, d))
            row += [f"{s.n:,}", f"{100 * s.f1:.2f}", _judge_cell(s.judge)] if s else ["-", "-", "-"]
        rows.append(row)
    return Table(f"{subset}: F1 and LLM-judge accuracy (%)", columns, rows, _failure_notes(cells.values()))


def _judge_cell(judge: float | None) -> str:
    return NO_JUDGE if judge is None else f"{100 * judge:.2f}"


def tool_use_table(stats: Sequence[RunStats], model: str, subset: str = "full_test") -> Table:
    """Tables 5/6: per dataset, averages per question of rounds, calls, submit rate, tokens and runtime."""
    cells = {s.dataset: s for s in stats if s.subset == subset and s.model == model}
    columns = ["Dataset", "n", "Rounds", "Search", "Open", "Submit (%)", "Total tokens", "Runtime (s)"]
    rows = [
        [
            dataset_label(d),
            f"{s.n:,}",
            f"{s.rounds:.2f}",
            f"{s.search_calls:.2f}",
            f"{s.open_calls:.2f}",
            f"{100 * s.submit_rate:.2f}",
            f"{s.total_tokens:,.0f}",
            f"{s.runtime_s:.2f}",
        ]
        for d in registered_datasets()
        if (s := cells.get(d))
    ]
    title = f"{subset}: tool-use statistics for {MODEL_LABELS.get(model, model)}"
    return Table(title, columns, rows, _failure_notes(cells.values()))


def _failure_notes(stats: Iterable[RunStats]) -> list[str]:
    notes = []
    for s in stats:
        run = f"{dataset_label(s.dataset)} / {s.model}"
        if s.errored or s.missing:
            notes.append(f"{run}: {s.errored} errored, {s.missing} missing of {s.n:,} (counted as 0)")
        if s.context_exhausted:
            notes.append(
                f"{run}: {s.context_exhausted} of {s.n:,} outgrew the model's context (no answer: 0)"
            )
    return notes


def report_tables(stats: Sequence[RunStats]) -> list[Table]:
    """Score tables per subset present, then tool-use tables per model of each subset."""
    subsets = [s for s in ("full_test", "random_300") if any(x.subset == s for x in stats)]
    subsets += sorted({x.subset for x in stats} - set(subsets))
    tables = [score_table(stats, s) for s in subsets]
    for subset in subsets:
        models = sorted({x.model for x in stats if x.subset == subset}, key=model_key)
        tables += [tool_use_table(stats, m, subset) for m in models]
    return tables


def stats_csv(stats: Sequence[RunStats]) -> str:
    """Every statistic, one row per results directory (long format)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(RunStats)], lineterminator="\n")
    writer.writeheader()
    writer.writerows(asdict(s) for s in stats)
    return out.getvalue()


_PLOTTED = (
    ("rounds", "Rounds"),
    ("search_calls", "Search calls"),
    ("open_calls", "Open calls"),
    ("submit_rate", "Submit rate"),
    ("total_tokens", "Total tokens"),
    ("runtime_s", "Runtime (s)"),
)


def plot_tool_use(stats: Sequence[RunStats], path: str | Path, subset: str = "full_test") -> Path:
    """A PNG of the tool-use statistics: one panel per statistic, datasets on x, one bar per model."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install matplotlib==3.11.2") from exc
    chosen = [s for s in stats if s.subset == subset]
    datasets = [d for d in registered_datasets() if any(s.dataset == d for s in chosen)]
    models = sorted({s.model for s in chosen}, key=model_key)
    cells = {(s.model, s.dataset): s for s in chosen}
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5), constrained_layout=True)
    width = 0.8 / max(1, len(models))
    for ax, (key, label) in zip(axes.flat, _PLOTTED):
        for m, model in enumerate(models):
            xs = [i + (m - (len(models) - 1) / 2) * width for i in range(len(datasets))]
            ys = [getattr(cells[(model, d)], key) if (model, d) in cells else 0.0 for d in datasets]
            ax.bar(xs, ys, width, label=MODEL_LABELS.get(model, model))
        ax.set_title(label)
        ax.set_xticks(range(len(datasets)), [dataset_label(d) for d in datasets], rotation=20)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"Tool use per question ({subset})")
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_report(stats: Sequence[RunStats], out_dir: str | Path, plots: bool = True) -> list[Path]:
    """``report.md``, ``report.tex``, ``stats.csv`` and (``plots``) ``tool_use_<subset>.png`` under ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = report_tables(stats)
    files = {
        "report.md": "\n".join(t.markdown() for t in tables),
        "report.tex": "\n".join(t.latex() for t in tables),
        "stats.csv": stats_csv(stats),
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    paths = [out / name for name in files]
    if plots:
        paths += [
            plot_tool_use(stats, out / f"tool_use_{s}.png", s) for s in sorted({x.subset for x in stats})
        ]
    return paths
