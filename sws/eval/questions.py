"""The questions a run asks and what they are: a QA file's (``--data``, with ``full_test``, sws's own seeded
``random_300`` resample or an id list) or the reference's QA archive's (``--qa-root``: the paper's
``full_test`` and ``random_300`` files, :mod:`sws.eval.reference_qa`).

The subset's label says which: ``random_300`` is the paper's file only; sws's resample is labelled
``random_300 (sws resample, seed 42)`` in ``run.json``, the report's tables, the UI and the CLI's output, so it
never passes for the paper's subset (:func:`subset_label`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sws.eval.datasets import DataSource, QAItem, load_dataset, select, subset_label
from sws.eval.reference_qa import load_reference_subset


def subset_slug(label: str) -> str:
    """A label as a file-name part: ``random_300 (sws resample, seed 42)`` -> ``random_300-sws-resample-seed-42``,
    an id list's path -> its stem."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", Path(label).stem).strip("-")


@dataclass(frozen=True, slots=True)
class QuestionSet:
    """The selected items of a run, the file they come from and how they were selected.

    Args:
        items: the questions, in the order the run asks (and seeds) them.
        path: the file read.
        subset: ``full_test``, ``random_300`` or an id list's path.
        sampling_seed: the seed of sws's ``random_300`` draw (None: nothing drawn).
        source: ``file`` (a QA file) or ``reference`` (the reference's QA archive).
    """

    items: list[QAItem]
    path: Path
    subset: str
    sampling_seed: int | None = None
    source: DataSource = "file"

    @property
    def label(self) -> str:
        return subset_label(self.subset, self.sampling_seed, self.source)


def read_questions(
    dataset: str,
    subset: str = "full_test",
    *,
    data_path: str | Path | None = None,
    qa_root: str | Path | None = None,
    seed: int = 42,
) -> QuestionSet:
    """The questions of ``dataset``'s ``subset``: from the reference's archive folder ``qa_root`` when given,
    else from the QA file ``data_path`` (``random_300``: sws's draw with ``seed``).

    Raises:
        DatasetError: the files do not read (:func:`~sws.eval.datasets.load_dataset`,
            :func:`~sws.eval.reference_qa.load_reference_subset`).
        ValueError: neither source is given.
    """
    if qa_root is not None:
        path, items = load_reference_subset(qa_root, dataset, subset)
        return QuestionSet(items, path, subset, source="reference")
    if data_path is None:
        raise ValueError("read_questions needs data_path or qa_root")
    items = select(load_dataset(data_path, dataset), subset, seed=seed)
    return QuestionSet(items, Path(data_path), subset, seed if subset == "random_300" else None)
