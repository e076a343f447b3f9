"""QA datasets: one item type for the registered benchmarks (``sws.eval.registry``), whatever form their
files come in.

Gold and aliases follow CONTRACT.md §7.1. Item ids come from the file (``id``, ``_id``, ``qid`` or FRAMES's
index column); files without ids get ``sha1(dataset + "\\0" + question)[:16]``, with ``-2``, ``-3``, ... on
repeats of the same question, so the ids of a file are stable and equal across its JSON and Parquet forms.

An id given twice in a file is refused (``file:line: duplicate id 'X' (first at line N)``) rather than
renamed: results, reports and the UI are keyed by id, and a renamed id would no longer match the file's. So is
text that is not valid Unicode (a lone surrogate such as the JSON escape ``\\ud83d``), which no record could
hold, and a file with no item to run (:class:`EmptyDatasetError`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sws.eval._readers import DatasetFormatError, position_name, where
from sws.eval.registry import DatasetError, QADataset, get_dataset, infer_dataset

logger = logging.getLogger(__name__)

SUBSETS = ("full_test", "random_300")


class EmptyDatasetError(DatasetError):
    """A QA file without an item to run: no rows, or none with a gold answer."""


@dataclass(frozen=True, slots=True)
class QAItem:
    """One question with its gold answer; ``question`` is the file's string, unstripped."""

    id: str
    question: str
    answer: str
    aliases: tuple[str, ...]
    type: str
    dataset: str

    @property
    def candidates(self) -> list[str]:
        """Gold first, then aliases: what every metric maximises over."""
        return [self.answer, *self.aliases]


def load_dataset(path: str | Path, dataset: str | None = None) -> list[QAItem]:
    """All items of a QA file with gold, in file order (items without gold are dropped, with a warning).

    Raises:
        DatasetError: unknown dataset, a file no reader understands (invalid UTF-8, malformed JSON, ...), a
            row without a question, text that is not valid Unicode or an id given twice; the message names
            the file and the line (or item).
        EmptyDatasetError: no item with gold.
    """
    path = Path(path)
    spec = get_dataset(dataset or infer_dataset(path))
    try:
        raws = list(spec.read(path))
    except DatasetFormatError as exc:
        raise DatasetError(str(exc)) from exc
    seen: Counter[str] = Counter()
    built = [(position, _build_item(raw, spec, seen, where(path, position))) for position, raw in raws]
    return collect_items(path, built)


def collect_items(path: Path, built: Sequence[tuple[int, QAItem | None]]) -> list[QAItem]:
    """The items of a file from (position, item or None: a row without gold) in file order; the rows
    without gold are dropped with a warning that counts and names them.

    Raises:
        DatasetError: an id given twice (naming both positions).
        EmptyDatasetError: no item with gold.
    """
    first: dict[str, int] = {}
    items = []
    for position, item in built:
        if item is None:
            continue
        if item.id in first:
            earlier = position_name(path, first[item.id])
            raise DatasetError(f"{where(path, position)}: duplicate id {item.id!r} (first at {earlier})")
        first[item.id] = position
        items.append(item)
    if not items:
        raise EmptyDatasetError(
            f"{path}: none of its {len(built)} items has a gold answer" if built else f"{path}: no items"
        )
    dropped = [position_name(path, position) for position, item in built if item is None]
    if dropped:
        shown = ", ".join(dropped[:5]) + (", ..." if len(dropped) > 5 else "")
        logger.warning("%s: dropped %d item(s) without gold (%s)", path.name, len(dropped), shown)
    return items


def _build_item(raw: dict[str, Any], dataset: QADataset, seen: Counter[str], at: str) -> QAItem | None:
    question = raw.get("question") or raw.get("prompt") or ""
    if not isinstance(question, str) or not question.strip():
        raise DatasetError(f"{at}: item without a question")
    gold = gold_and_aliases(raw.get("answer"), raw.get("answers"), raw.get("answer_aliases"))
    if gold is None:
        return None
    ident = raw.get("id")
    if ident is None:  # "surrogatepass": a lone surrogate is refused below, naming its field
        base = hashlib.sha1(f"{dataset.name}\0{question}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
        seen[base] += 1
        ident = base if seen[base] == 1 else f"{base}-{seen[base]}"
    kind = str(raw["type"]) if raw.get("type") else dataset.item_type(raw, ident)
    return checked_item(QAItem(ident, question, gold[0], gold[1], kind, dataset.name), at)


def checked_item(item: QAItem, at: str) -> QAItem:
    """``item``, once its text is valid Unicode (:func:`_check_unicode`, naming ``at`` and the field)."""
    for name in ("id", "question", "answer", "aliases", "type"):
        value = getattr(item, name)
        for text in (value,) if isinstance(value, str) else value:
            _check_unicode(text, f"{at}: {name}")
    return item


def _check_unicode(text: str, what: str) -> None:
    """Refuse a lone surrogate (half of a UTF-16 pair, e.g. the JSON escape ``\\ud83d``): not valid Unicode,
    it cannot be sent to a model as UTF-8 nor written to the results."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DatasetError(
            f"{what} holds a lone surrogate {text[exc.start]!r} at character {exc.start + 1} (half of a "
            "UTF-16 pair, not valid Unicode); fix it in the file"
        ) from None


def gold_and_aliases(
    answer: Any, answers: Any, answer_aliases: Any = None
) -> tuple[str, tuple[str, ...]] | None:
    """Primary gold and aliases per CONTRACT.md §7.1, or None when the item has no gold.

    With ``answers`` and no ``answer``, the aliases are the non-empty answers but the first of them, as the
    reference's ``item_answer_aliases`` computes them (``[None, "x"]``: gold ``"None"``, no alias).
    """
    answers = list(answers) if isinstance(answers, (list, tuple)) else answers
    if answer is None and not (isinstance(answers, list) and answers):
        return None
    pool = answers if isinstance(answers, list) else answer_aliases
    texts = (
        tuple(s for a in pool if a is not None and (s := str(a).strip()))
        if isinstance(pool, (list, tuple))
        else ()
    )
    if isinstance(answers, list) and answer is None:  # the reference drops the first non-empty answer
        texts = texts[1:]
    return (str(answer) if answer is not None else str(answers[0])), texts


def random_subset(items: Sequence[QAItem], n: int = 300, seed: int = 42) -> list[QAItem]:
    """``n`` items drawn with ``random.Random(seed)``, kept in file order; all of them when there are <= n."""
    if len(items) <= n:
        return list(items)
    return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), n))]


def subset_by_ids(items: Sequence[QAItem], ids: Iterable[str]) -> list[QAItem]:
    """The items with these ids, in the order given.

    Raises:
        DatasetError: an id that is not in ``items``.
    """
    by_id = {item.id: item for item in items}
    ids = [str(i) for i in ids]
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise DatasetError(f"{len(missing)} id(s) not in the dataset, e.g. {missing[:5]}")
    return [by_id[i] for i in ids]


def read_id_list(path: str | Path) -> list[str]:
    """Ids from a text file (one per line) or a JSON list of ids or of objects with ``id``.

    Raises:
        DatasetError: an id listed twice (``file:LINE`` or ``file: item N``), invalid UTF-8 or JSON.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".json":
            listed = [
                (f": item {n}", f"item {n}", str(x["id"]) if isinstance(x, dict) else str(x))
                for n, x in enumerate(json.loads(text), 1)
            ]
        else:
            lines = enumerate(text.splitlines(), 1)
            listed = [(f":{n}", f"line {n}", s) for n, line in lines if (s := line.strip())]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not an id list: {exc}") from exc
    first: dict[str, str] = {}
    for at, name, ident in listed:
        if ident in first:
            raise DatasetError(f"{path}{at}: duplicate id {ident!r} (first at {first[ident]})")
        first[ident] = name
    return list(first)


def select(items: Sequence[QAItem], subset: str = "full_test", *, seed: int = 42) -> list[QAItem]:
    """``full_test`` (all), ``random_300`` (seeded, 300 or all) or the path of an id list.

    Raises:
        DatasetError: an unknown subset name or ids not in the dataset.
    """
    if subset == "full_test":
        return list(items)
    if subset == "random_300":
        return random_subset(items, 300, seed)
    if Path(subset).is_file():
        return subset_by_ids(items, read_id_list(subset))
    raise DatasetError(f"unknown subset {subset!r} (full_test, random_300, or an id-list file)")


# where a run's questions come from: a QA file, or the reference's QA archive read as its runner reads it
DataSource = Literal["file", "reference"]


def subset_label(subset: str, sampling_seed: int | None = None, source: DataSource = "file") -> str:
    """``subset`` as shown: ``random_300`` drawn by sws from a file is ``random_300 (sws resample, seed N)``
    (``(sws resample)`` when its seed was not recorded); the reference's files and other subsets keep their
    names."""
    if subset != "random_300" or source == "reference":
        return subset
    return f"random_300 (sws resample{'' if sampling_seed is None else f', seed {sampling_seed}'})"


def dataset_summary(path: str | Path, dataset: str, *, seed: int = 42) -> dict:
    """Load a file as the evaluation will: its item count and the seeded ``random_300`` subset's fingerprint.

    Raises:
        DatasetError: the file does not read as ``dataset``.
    """
    items = load_dataset(path, dataset)
    subset = select(items, "random_300", seed=seed)
    return {
        "items": len(items),
        "random_300": {
            "label": subset_label("random_300", seed),
            "seed": seed,
            "n": len(subset),
            "ids_sha256": ids_sha256([i.id for i in subset]),
        },
    }


def ids_sha256(ids: Sequence[str]) -> str:
    """sha256 of item ids in order, one per line: two selections hold the same ids in the same order iff
    equal."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes: a dataset file's identity (another file may give the same ids to other
    questions)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
