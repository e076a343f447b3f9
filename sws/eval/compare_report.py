"""``sws compare``'s outputs: ``compare.md`` (also printed), ``compare.csv`` (one row per question),
``compare.json`` (everything, for scripts) and ``compare.png`` (mean Δ and its interval per metric)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sws.eval.compare import ALL, DIFFERS_ON, FIELDS, METRICS, SCORES, Comparison, QuestionDiff, Side
from sws.eval.registry import dataset_label
from sws.eval.replay import NOT_DETERMINISTIC, ReplayedCall, ReplayResult
from sws.eval.report import Table
from sws.io import write_text_atomically

_LABELS = {
    "f1": "F1 (%)",
    "em": "EM (%)",
    "judge": "Judge (%)",
    "rounds": "Rounds",
    "search_calls": "Search calls",
    "open_calls": "Open calls",
    "total_tokens": "Total tokens",
    "runtime_s": "Runtime (s)",
}
_NOT_DIFFERING = "tokens and runtime are compared but never make a question differ"


def to_json(comparison: Comparison, replayed: ReplayResult | None = None) -> dict[str, Any]:
    """Everything compared, as plain JSON values (``compare.json``)."""
    out = {
        "a": _side(comparison.a),
        "b": _side(comparison.b),
        "delta": "B - A",
        "seed": comparison.seed,
        "resamples": comparison.resamples,
        "differs_on": list(DIFFERS_ON),
        "groups": {name: asdict(group) for name, group in comparison.groups.items()},
        "differing": [_key(q) for q in comparison.differing],
        "only_a": [_key(q) for q in comparison.only_a],
        "only_b": [_key(q) for q in comparison.only_b],
        "missing": comparison.missing,
        "questions": [
            {"dataset": q.dataset, "id": q.id, "a": q.a, "b": q.b, "differs": q.differs}
            for q in comparison.questions
        ],
    }
    if replayed is not None:
        out["replay"] = {
            "environment": replayed.environment,
            "calls": replayed.calls,
            "groups": {g: {"calls": n, "identical": same} for g, (n, same) in replayed.groups.items()},
            "differing": replayed.differing,
            "first_differing": [_replayed(r) for r in replayed.shown],
            "problems": replayed.problems,
            "not_deterministic": NOT_DETERMINISTIC,
        }
    return out


def to_csv(comparison: Comparison) -> str:
    """One row per question: where it is, what differs, each field on A and B, and each metric's Δ."""
    columns = ["dataset", "id", "present", "differs"]
    columns += [f"{name}_{side}" for name in FIELDS for side in ("a", "b")]
    columns += [f"delta_{m}" for m in METRICS]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for q in comparison.questions:
        present = "both" if q.a and q.b else "A only" if q.a else "B only"
        row = [q.dataset, q.id, present, ";".join(q.differs)]
        row += [(side or {}).get(name) for name in FIELDS for side in (q.a, q.b)]
        writer.writerow(row + [q.delta(m) for m in METRICS])
    return out.getvalue()


def to_markdown(comparison: Comparison, replayed: ReplayResult | None = None, listed: int = 20) -> str:
    """The summary per dataset, then the questions that differ or are on one side only (``listed`` of each,
    the rest counted), the values records lack, and the replay if one ran."""
    a, b = comparison.a, comparison.b
    lines = ["# sws compare", "", f"- A: {_describe(a)}", f"- B: {_describe(b)}"]
    lines += [f"- Δ is B − A; 95 % paired bootstrap interval ({comparison.resamples:,} resamples, seed "]
    lines[-1] += f"{comparison.seed}); {_NOT_DIFFERING}"
    for name, side in (("A", a), ("B", b)):
        lines += _listed(f"{name}: what could not be read as it is", side.problems, listed)
    for name, group in comparison.groups.items():
        rows = [
            [
                _LABELS[metric],
                str(m.n),
                *(_number(v, _scale(metric)) for v in (m.mean_a, m.mean_b, m.mean_delta)),
            ]
            + [_interval(m, _scale(metric))]
            for metric, m in group.metrics.items()
        ]
        notes = [
            f"questions: A {group.questions_a}, B {group.questions_b}, paired {group.paired}; only in A "
            + f"{group.only_a}, only in B {group.only_b}",
            f"differing: {group.differing} of {group.paired}; stop reason changed: {group.stop_reason_changes}",
            f"judge flips (A→B): {', '.join(f'{k} {v}' for k, v in group.judge_flips.items())}",
        ]
        title = "All datasets" if name == ALL else dataset_label(name)
        lines += [
            "",
            Table(title, ["Metric", "n", "A", "B", "Δ", "95 % CI"], rows, notes).markdown().rstrip("\n"),
        ]
    lines += _questions("Questions that differ", comparison.differing, listed, differs=True)
    lines += _questions("Only in A", comparison.only_a, listed)
    lines += _questions("Only in B", comparison.only_b, listed)
    for side, lacking in comparison.missing.items():
        for name, keys in lacking.items():
            lines += _listed(f"{side}: {len(keys)} record(s) without {name}", keys, listed)
    if replayed is not None:
        lines += replay_markdown(replayed, listed)
    return "\n".join(lines) + "\n"


def replay_markdown(replayed: ReplayResult, listed: int = 20) -> list[str]:
    """The replay's lines: identical share per group, then each first differing call with both texts."""
    rows = [
        [group, str(n), str(same), f"{100 * same / n:.2f} %"] for group, (n, same) in replayed.groups.items()
    ]
    notes = [f"{replayed.differing} of {replayed.calls} calls differ; not deterministic: {NOT_DETERMINISTIC}"]
    title = f"Replay of B's tool calls against {replayed.environment}"
    lines = [
        "",
        Table(title, ["Tool (method)", "Calls", "Identical", "Share"], rows, notes).markdown().rstrip("\n"),
    ]
    lines += _listed(f"{len(replayed.problems)} tool message(s) not replayed", replayed.problems, listed)
    for r in replayed.shown:
        c = r.call
        lines += ["", f"### {c.dataset}/{c.id} message {c.message}: {c.tool} {c.arguments}", "", "Recorded:"]
        lines += ["", "```", c.recorded, "```", "", "Replayed:", "", "```", r.replayed, "```"]
    return lines


def plot(comparison: Comparison, path: str | Path) -> Path:
    """A PNG: one panel per metric, each dataset's mean Δ with its 95 % interval, a line at 0."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(comparison.groups)
    fig, axes = plt.subplots(2, 4, figsize=(14, 6), constrained_layout=True)
    for ax, metric in zip(axes.flat, METRICS):
        scale = _scale(metric)
        for x, name in enumerate(names):
            m = comparison.groups[name].metrics[metric]
            if m.mean_delta is not None:
                low, high = (m.mean_delta - m.ci_low) * scale, (m.ci_high - m.mean_delta) * scale
                ax.errorbar([x], [m.mean_delta * scale], yerr=[[low], [high]], fmt="o", capsize=4)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_title(f"Δ {_LABELS[metric]}")
        ax.set_xticks(range(len(names)), [dataset_label(n) for n in names], rotation=20)
    fig.suptitle(f"B − A per question: {comparison.b.path} vs {comparison.a.path}")
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_comparison(
    comparison: Comparison, out_dir: str | Path, replayed: ReplayResult | None = None, plots: bool = True
) -> list[Path]:
    """``compare.md``, ``compare.csv``, ``compare.json`` and (``plots``) ``compare.png`` under ``out_dir``."""
    out = Path(out_dir)
    files = {
        "compare.md": to_markdown(comparison, replayed),
        "compare.csv": to_csv(comparison),
        "compare.json": json.dumps(to_json(comparison, replayed), indent=1, ensure_ascii=False) + "\n",
    }
    for name, text in files.items():
        write_text_atomically(out / name, text)
    paths = [out / name for name in files]
    return paths + [plot(comparison, out / "compare.png")] if plots else paths


def _side(side: Side) -> dict[str, Any]:
    return {
        "path": side.path,
        "kind": side.kind,
        "models": side.models,
        "records": len(side.records),
        "problems": side.problems,
    }


def _describe(side: Side) -> str:
    return f"{side.path} ({side.kind}, model {', '.join(side.models)}, {len(side.records)} records)"


def _key(q: QuestionDiff) -> str:
    return f"{q.dataset}/{q.id}"


def _replayed(r: ReplayedCall) -> dict[str, Any]:
    c = r.call
    return {
        "dataset": c.dataset,
        "id": c.id,
        "message": c.message,
        "tool": c.tool,
        "group": c.group,
        "arguments": c.arguments,
        "recorded": c.recorded,
        "replayed": r.replayed,
    }


def _scale(metric: str) -> int:
    """Scores are shown as percentages."""
    return 100 if metric in SCORES else 1


def _number(value: float | None, scale: float = 1) -> str:
    return "-" if value is None else f"{value * scale:,.2f}"


def _interval(m: Any, scale: float) -> str:
    return "-" if m.ci_low is None else f"[{m.ci_low * scale:,.2f}, {m.ci_high * scale:,.2f}]"


def _listed(title: str, items: list[str], listed: int) -> list[str]:
    if not items:
        return []
    more = f" (first {listed})" if len(items) > listed else ""
    return ["", f"{title}{more}:", *(f"- {item}" for item in items[:listed])]


def _questions(title: str, questions: list[QuestionDiff], listed: int, differs: bool = False) -> list[str]:
    if not questions:
        return []
    more = f" (first {listed} of {len(questions)})" if len(questions) > listed else f" ({len(questions)})"
    columns = [
        "Dataset",
        "id",
        *(["Differs on"] if differs else []),
        "Answer A",
        "Answer B",
        "ΔF1",
        "Judge A→B",
    ]
    rows = []
    for q in questions[:listed]:
        a, b = q.a or {}, q.b or {}
        row = [dataset_label(q.dataset), q.id, *([", ".join(q.differs)] if differs else [])]
        row += [_cell(a.get("answer")), _cell(b.get("answer")), _number(q.delta("f1"))]
        rows.append(row + [f"{_cell(a.get('judge'))}→{_cell(b.get('judge'))}"])
    return ["", Table(f"{title}{more}", columns, rows, []).markdown().rstrip("\n")]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return str(value).replace("|", "\\|").replace("\n", " ")[:80]
