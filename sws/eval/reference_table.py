"""The table the reference's ``scripts/print_qa_benchmark_md_table.py`` prints for an output tree (CONTRACT.md
§8.1), character for character, from :mod:`sws.eval.reference_runs`.

Its numbers: per (model, dataset) folder, ``n`` is the ``.json`` files present, F1 and judge are sums over
them divided by ``n`` (missing values 0), printed x100 with 2 decimals; a folder that does not exist prints
``-`` everywhere, an empty one ``0`` and ``-``. Its layout: a title line (``full_test`` or
``sample_random_300``), a two-level header (the dataset's label centred over its ``n | f1 | gpt`` block, or
``f1 | gpt`` with ``disable_n``), right-aligned cells, all six datasets as columns and the model folders as
rows in the script's order. Where the script stops at an unreadable file, sws counts it with 0 (its problem
is named by the reader).
"""

from __future__ import annotations

from collections.abc import Sequence

from sws.eval.reference_runs import REFERENCE_DATASETS, ReferenceTree
from sws.eval.registry import dataset_label
from sws.eval.report import MODEL_LABELS

SCORE_WIDTH = len("100.00")
_TITLES = {"full_test": "full_test", "random_300": "sample_random_300"}
_ORDER = tuple(_TITLES)

Cell = tuple[int, float, float] | None  # (n, f1, judge) fractions; None: no such folder


def reference_tables(trees: Sequence[ReferenceTree], disable_n: bool = False) -> str:
    """The script's output for these trees: full_test first, then sample_random_300, then others by name,
    separated by a blank line as the script separates its two."""

    def order(tree: ReferenceTree) -> tuple[int, str]:
        return (_ORDER.index(tree.subset) if tree.subset in _ORDER else len(_ORDER), str(tree.root))

    return "\n".join(reference_table(tree, disable_n) for tree in sorted(trees, key=order))


def reference_table(tree: ReferenceTree, disable_n: bool = False) -> str:
    """One tree's table as the script prints it (with its title line), each line ending in a newline."""
    cells: dict[tuple[str, str], Cell] = {}
    for run in tree.runs:
        n = run.files
        cells[(run.model, run.dataset)] = (n, run.f1_sum / n, run.judge_sum / n) if n else (0, 0.0, 0.0)
    models = tree.models
    method_w = max([len("Method")] + [len(_label(m)) for m in models])
    n_w = max([len("n")] + [len(str(c[0])) for c in cells.values() if c is not None])
    blocks = [_block_widths(d, 0 if disable_n else n_w, disable_n) for d in REFERENCE_DATASETS]

    def line(first: str, groups: list[list[str]]) -> str:
        return "| " + " | ".join([first] + [c for group in groups for c in group]) + " |\n"

    def parts(widths: tuple[int, int, int], n: str, f1: str, gpt: str, fill: str = " ") -> list[str]:
        n_width, f_width, g_width = widths
        shown = [] if disable_n else [n.rjust(n_width, fill)]
        return shown + [f1.rjust(f_width, fill), gpt.rjust(g_width, fill)]

    text = _TITLES.get(tree.subset, tree.subset) + "\n"
    text += line(
        "Method".ljust(method_w),
        [[_center(dataset_label(d), _span(w, disable_n))] for d, w in zip(REFERENCE_DATASETS, blocks)],
    )
    text += line(" " * method_w, [parts(w, "n", "f1", "gpt") for w in blocks])
    text += line("-" * method_w, [parts(w, "", "", "", "-") for w in blocks])
    for model in models:
        row = []
        for dataset, widths in zip(REFERENCE_DATASETS, blocks):
            cell = cells.get((model, dataset))
            if cell is None:
                row.append(parts(widths, "-", "-", "-"))
            else:
                n, f1, judge = cell
                row.append(parts(widths, str(n), _score(f1, n), _score(judge, n)))
        text += line(_label(model).ljust(method_w), row)
    return text


def _block_widths(dataset: str, n_width: int, disable_n: bool) -> tuple[int, int, int]:
    """Widths of a dataset's n, f1 and gpt columns: the gpt column grows when the label is wider than all."""
    widths = (n_width, SCORE_WIDTH, SCORE_WIDTH)
    extra = len(dataset_label(dataset)) - _span(widths, disable_n)
    return (n_width, SCORE_WIDTH, SCORE_WIDTH + max(0, extra))


def _span(widths: tuple[int, int, int], disable_n: bool) -> int:
    n_width, f_width, g_width = widths
    return f_width + 3 + g_width + (0 if disable_n else n_width + 3)


def _center(text: str, width: int) -> str:
    """Centred, the odd space on the right."""
    pad = max(0, width - len(text))
    return " " * (pad // 2) + text + " " * (pad - pad // 2)


def _score(value: float, n: int) -> str:
    return f"{value * 100:.2f}" if n > 0 else "-"


def _label(model: str) -> str:
    return MODEL_LABELS.get(model, model)
