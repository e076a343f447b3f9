"""The reference's QA archive (``qa_benchmarks_6.tar.zst`` -> ``data/dataset``), read as its runner
``run_qa_agent.py`` reads it, so that a run asks exactly the paper's questions in the paper's order.

Where a dataset's files sit there is its :class:`~sws.eval.registry.ReferenceFiles` (the paper's six:
:mod:`sws.eval.paper_datasets`). The two forms are read as the reference reads them:

- ``full_test/<Dataset>/<file>.jsonl``: one JSON object a line (blank lines skipped); a row whose
  ``question`` is empty takes its stripped ``prompt``; a row without a ``type`` is typed as its dataset's
  ``ReferenceFiles.item_type`` says; a row without gold is dropped (counted and named in a warning).
- ``random_300/<Dataset>.json``: a JSON list whose rows are taken as they are: no ``prompt`` fallback, no
  typing (a row without ``type`` has type ``""``).

Every item: its id is its ``id``, else its ``qid``, stripped; gold and aliases per CONTRACT.md §7.1; its type
stripped (as the reference records them). Item ``i`` (0-based, after ``--limit``) is seeded ``seed + i`` as
the reference seeds it (``args.seed + idx``); sws's episodes are seeded so (``AgentConfig.seed``, 42).

Where the reference would fail or do something sws cannot, loading stops with a one-line
:class:`~sws.eval.registry.DatasetError` naming the file and the line (JSONL) or item (JSON): a missing
folder or file, invalid UTF-8, malformed JSON, a row that is not an object, a row without an id (the
reference names its output file by it), without a question (the reference fails that item) or, in a
``random_300`` list, without gold (the reference runs it unscored; sws scores every question), an id given
twice, a file without items.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from sws.eval._readers import DatasetFormatError, json_document, json_line, utf8_text, where
from sws.eval.datasets import QAItem, checked_item, collect_items, gold_and_aliases
from sws.eval.registry import DatasetError, ReferenceFiles, get_dataset, registered_datasets

ARCHIVE_SUBSETS = ("full_test", "random_300")


def load_reference_subset(root: str | Path, dataset: str, subset: str) -> tuple[Path, list[QAItem]]:
    """The file of ``dataset``'s ``subset`` in the archive folder ``root`` (``data/dataset``) and its items,
    in file order.

    Raises:
        DatasetError: see the module's docstring.
        EmptyDatasetError: the file holds no item (with gold, for JSONL).
    """
    spec = get_dataset(dataset)
    if spec.reference is None:
        there = ", ".join(d.name for d in registered_datasets().values() if d.reference)
        raise DatasetError(f"{spec.name} is not in the reference's QA archive (its datasets: {there})")
    root = Path(root)
    if not any((root / subset).is_dir() for subset in ARCHIVE_SUBSETS):
        raise DatasetError(
            f"{root} is not the reference's QA archive folder: it has neither full_test/ nor random_300/ "
            "(give the archive's data/dataset)"
        )
    path = spec.reference.path(root, subset)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file (the reference reads {spec.name}'s {subset} from it)")
    try:
        if path.suffix == ".jsonl":
            return path, _read_jsonl(path, spec.name, spec.reference)
        return path, _read_json(path, spec.name)
    except DatasetFormatError as exc:
        raise DatasetError(str(exc)) from exc


def _read_jsonl(path: Path, dataset: str, files: ReferenceFiles) -> list[QAItem]:
    built = []
    for n, line in enumerate(io.StringIO(utf8_text(path), newline=None), 1):  # lines as open() splits them
        if line.strip():
            row = _normalised(_object(json_line(line.strip(), path, n), path, n), files)
            built.append((n, _item(row, dataset, where(path, n), drop_without_gold=True)))
    return collect_items(path, built)


def _read_json(path: Path, dataset: str) -> list[QAItem]:
    rows = json_document(path)
    if not isinstance(rows, list):
        raise DatasetError(f"{path}: expected a JSON list of questions, got {type(rows).__name__}")
    built = [
        (n, _item(_object(row, path, n), dataset, where(path, n), drop_without_gold=False))
        for n, row in enumerate(rows, 1)
    ]
    return collect_items(path, built)


def _object(row: Any, path: Path, position: int) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DatasetError(f"{where(path, position)}: expected a JSON object, got {type(row).__name__}")
    return row


def _normalised(row: dict[str, Any], files: ReferenceFiles) -> dict[str, Any]:
    """A ``full_test`` row as the reference's runner normalises it: an empty question takes the stripped
    prompt (when there is one), a row without a type gets its dataset's."""
    row = dict(row)
    prompt = str(row.get("prompt") or "").strip()
    if prompt and not str(row.get("question") or "").strip():
        row["question"] = prompt
    if not str(row.get("type") or "").strip():
        row["type"] = files.item_type(row, str(row.get("id") or ""))
    return row


def _item(row: dict[str, Any], dataset: str, at: str, *, drop_without_gold: bool) -> QAItem | None:
    ident = str(row.get("id") or row.get("qid") or "").strip()
    if not ident:
        raise DatasetError(f"{at}: no id or qid (the reference names each question's output file by it)")
    question = "" if row.get("question") is None else str(row["question"])
    if not question.strip():
        raise DatasetError(f"{at}: item without a question")
    gold = gold_and_aliases(row.get("answer"), row.get("answers"), row.get("answer_aliases"))
    if gold is None:
        if drop_without_gold:
            return None
        raise DatasetError(
            f"{at}: item {ident!r} has no gold answer (the reference runs it unscored; sws scores every question)"
        )
    kind = str(row.get("type") or "").strip()
    return checked_item(QAItem(ident, question, gold[0], gold[1], kind, dataset), at)
