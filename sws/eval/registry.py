"""The QA datasets by name: ``register_dataset(QADataset(...))`` makes a dataset loadable (``sws eval
--dataset``, :func:`sws.eval.load_dataset`), fetchable when it has a source (``sws fetch datasets``), readable
from the reference's QA archive when it says where it sits there (``sws eval --qa-root``,
:mod:`sws.eval.reference_qa`) and listed in both commands' help; the paper's six
(:mod:`sws.eval.paper_datasets`) register the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sws.eval._readers import read_raw
from sws.fetch import FetchError, QASource


class DatasetError(ValueError):
    """Unknown dataset or subset, or ids that are not in the dataset."""


def default_type(raw: dict[str, Any], ident: str) -> str:
    return "default"


@dataclass(frozen=True, slots=True)
class ReferenceFiles:
    """Where a dataset sits in the reference's QA archive (its ``data/dataset`` folder) and how the reference
    runner types its ``full_test`` rows that tell no type.

    Args:
        directory: its name there: ``full_test/<directory>/<full_test>`` and ``random_300/<directory>.json``.
        full_test: its ``full_test`` JSONL file's name.
        item_type: ``item_type(row, id)``: the type of a ``full_test`` row without one, ``id`` being the
            row's ``id`` field (the reference types by it).
    """

    directory: str
    full_test: str
    item_type: Callable[[dict[str, Any], str], str] = default_type

    def path(self, root: str | Path, subset: str) -> Path:
        """The file of ``subset`` (``full_test`` or ``random_300``) under the archive's ``root``."""
        if subset == "full_test":
            return Path(root) / "full_test" / self.directory / self.full_test
        if subset == "random_300":
            return Path(root) / "random_300" / f"{self.directory}.json"
        raise DatasetError(f"the reference's QA archive holds full_test and random_300, not {subset!r}")


@dataclass(frozen=True, slots=True)
class QADataset:
    """One QA benchmark the evaluation knows.

    Args:
        name: canonical name (records, reports and tables carry it).
        aliases: more names it is given by (``--dataset``, ``--name``) and file-name prefixes that tell it
            (:func:`infer_dataset`); lower case, without ``-`` and ``_``. Its name in lower case is one too.
        item_type: ``item_type(raw, id)``: the type of an item whose file tells none (``type`` column).
        read: ``read(path)`` yields (position, raw row) of a file (:func:`sws.eval._readers.read_raw`:
            JSON, JSONL, Parquet, CSV, TSV by extension).
        source: where ``sws fetch datasets`` gets its evaluation split (None: not fetched).
        label: its column name in the report's tables (default: its name).
        reference: where it sits in the reference's QA archive (None: not there).
    """

    name: str
    aliases: tuple[str, ...] = ()
    item_type: Callable[[dict[str, Any], str], str] = default_type
    read: Callable[[Path], Iterator[tuple[int, dict[str, Any]]]] = read_raw
    source: QASource | None = None
    label: str = ""
    reference: ReferenceFiles | None = None

    def __post_init__(self) -> None:
        if self.source is not None and self.source.dataset != self.name:
            raise ValueError(f"dataset {self.name!r}: its source is {self.source.dataset!r}'s")
        bad = [a for a in self.aliases if a != _key(a)]
        if bad:
            raise ValueError(f"dataset {self.name!r}: aliases {bad} are not lower case without - and _")

    @property
    def keys(self) -> tuple[str, ...]:
        """Its aliases, then its name in lower case (without repeats)."""
        return tuple(dict.fromkeys((*self.aliases, _key(self.name))))


_DATASETS: dict[str, QADataset] = {}


def register_dataset(dataset: QADataset) -> QADataset:
    """Make ``dataset`` known by its name and aliases; returns it.

    Raises:
        ValueError: its name or one of its aliases is another dataset's.
    """
    taken = {key: other.name for other in _DATASETS.values() for key in other.keys}
    clash = [k for k in dataset.keys if k in taken]
    if dataset.name in _DATASETS or clash:
        raise ValueError(f"dataset {dataset.name!r}: {clash or [dataset.name]} already registered")
    _DATASETS[dataset.name] = dataset
    return dataset


def unregister_dataset(name: str) -> None:
    """Undo :func:`register_dataset`."""
    del _DATASETS[name]


def registered_datasets() -> dict[str, QADataset]:
    """A copy of the registry, name -> dataset, in registration order."""
    return dict(_DATASETS)


def get_dataset(name: str) -> QADataset:
    """``"2wiki"``, ``"hotpotqa"``, ``"Hotpot-QA"``, ... -> the dataset.

    Raises:
        DatasetError: no dataset has that name or alias.
    """
    key = _key(name.strip())
    for dataset in _DATASETS.values():
        if key in dataset.keys:
            return dataset
    raise DatasetError(f"unknown dataset {name!r} (known: {', '.join(_DATASETS)})")


def dataset_label(name: str) -> str:
    """A dataset's column name in the report's tables: its label, else its name (unregistered ones too)."""
    dataset = _DATASETS.get(name)
    return dataset.label or name if dataset else name


def canonical_dataset(name: str) -> str:
    """``"2wiki"``, ``"hotpotqa"``, ... -> the canonical name."""
    return get_dataset(name).name


def infer_dataset(path: str | Path) -> str:
    """The dataset a file belongs to, from its name (``hotpotqa_dev.searchr1.parquet`` -> HotpotQA).

    Raises:
        DatasetError: no dataset's name or alias starts the file name.
    """
    stem = _key(Path(path).name)
    for dataset in _DATASETS.values():
        if any(stem.startswith(key) for key in dataset.keys):
            return dataset.name
    raise DatasetError(f"cannot tell the dataset of {Path(path).name!r}; pass it explicitly")


def dataset_choices(fetchable: bool = False) -> str:
    """``"2wikimultihopqa, hotpotqa, ... or bamboogle"``: the names a command accepts, for its help
    (``fetchable``: those with a source)."""
    names = [_key(d.name) for d in _DATASETS.values() if d.source or not fetchable]
    return " or ".join(filter(None, (", ".join(names[:-1]), *names[-1:])))


def qa_sources(names: Iterable[str] = ()) -> list[QASource]:
    """The fetch sources of the datasets ``names`` (canonical names), or of all that have one.

    Raises:
        FetchError: a name without a source.
    """
    sources = {d.name: d.source for d in _DATASETS.values() if d.source}
    wanted = set(names)
    unknown = wanted - set(sources)
    if unknown:
        raise FetchError(f"no QA source for {', '.join(sorted(unknown))} (known: {', '.join(sources)})")
    return [s for name, s in sources.items() if not wanted or name in wanted]


def _key(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")
