"""``run.json``, typed: a results directory's identity and the selection of items it covers.

The identity (:data:`IDENTITY_KEYS`: the dataset, its file's sha256 and source, subset and sampling seed, model,
agent config, environment fingerprint) is fixed when the directory is created; a resume with another is
refused naming what differs, and first what the two runs' questions are when they differ (the paper's
``random_300`` never resumes into sws's resample, :func:`sws.eval.datasets.subset_label`). ``run.json`` also
records the file's path and the subset's label (``subset_label``). The selection (``items`` ids, ``ids_sha256``
of them in order) grows only on purpose (``extend``, recorded under ``extended``), by items after those already
selected.

A ``run.json`` that is not JSON or does not match :class:`RunMeta` (``"items": "abc"``) raises
:class:`DamagedRunError` naming the first wrong field, so reports and the UI show the run as damaged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from sws.eval.datasets import DataSource, ids_sha256, subset_label

RUN_FILE = "run.json"
IDENTITY_KEYS = (
    "dataset",
    "data_sha256",
    "data_source",
    "subset",
    "sampling_seed",
    "model",
    "agent_config",
    "fingerprint",
)
Count = Annotated[int, Field(ge=0)]


class RunMismatchError(ValueError):
    """The directory holds results of a different run (other inputs, model, agent config or environment)."""


class DamagedRunError(ValueError):
    """A ``run.json`` that cannot be read or does not match :class:`RunMeta`; ``reason`` says why."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path} is damaged: {reason}")


class Extension(BaseModel):
    """One deliberate growth of the selection: from ``from_items`` to ``items`` items, ``at`` (UTC)."""

    model_config = ConfigDict(strict=True)
    from_items: Count
    items: Count
    at: str


class RunMeta(BaseModel):
    """The contents of ``run.json``; unknown keys are kept as they are."""

    model_config = ConfigDict(strict=True, extra="allow")
    dataset: str
    subset: str = "full_test"
    model: str
    agent_config: dict[str, Any]
    fingerprint: str
    data_path: str | None = None  # the file the questions were read from
    data_sha256: str | None = None
    data_source: DataSource = "file"  # "reference": the reference's QA archive (sws eval --qa-root)
    sampling_seed: int | None = None  # sws's random_300 resample only: other subsets do not sample
    items: Count | None = None
    ids_sha256: str | None = None
    llm_base_url: str | None = None
    query_embedding: dict[str, Any] | None = None  # how the environment embeds queries (its /info)
    judge: dict[str, Any] | None = None
    extended: list[Extension] = []

    @computed_field
    @property
    def subset_label(self) -> str:
        """What the questions are (``random_300`` or ``random_300 (sws resample, seed 42)``, ...)."""
        return subset_label(self.subset, self.sampling_seed, self.data_source)


def read_run_meta(out_dir: str | Path) -> RunMeta:
    """The validated ``run.json`` of ``out_dir``.

    Raises:
        DamagedRunError: it cannot be read, is not JSON or does not match :class:`RunMeta`.
    """
    path = Path(out_dir) / RUN_FILE
    try:
        return RunMeta.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DamagedRunError(path, f"{type(exc).__name__}: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the top level"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise DamagedRunError(path, f"{where}: {first['msg']}{more}") from exc


def resumed(out_dir: Path, previous: RunMeta, run: RunMeta, ids: Sequence[str], extend: bool) -> RunMeta:
    """``previous`` as a resume with ``run`` (selecting ``ids``) leaves it: unchanged, or extended.

    Raises:
        RunMismatchError: the identity differs, or the selection differs without ``extend``, or ``extend``
            would not only add items after the selected ones.
    """
    diffs = [_difference(k, getattr(previous, k), getattr(run, k)) for k in IDENTITY_KEYS]
    if diffs := "; ".join(d for d in diffs if d):
        kinds = (previous.subset_label, run.subset_label)
        what = f"a run of {kinds[0]}, not {kinds[1]}" if kinds[0] != kinds[1] else "another run"
        raise RunMismatchError(f"{out_dir} holds {what} ({diffs}); use a new --out directory")
    if (previous.items, previous.ids_sha256) == (run.items, run.ids_sha256):
        return previous
    before = previous.items or 0
    if not extend:
        raise RunMismatchError(
            f"{out_dir} holds a run of {_other(previous, run)}; add --extend to add the new items to it, or "
            "use a new --out directory"
        )
    if len(ids) <= before or ids_sha256(ids[:before]) != previous.ids_sha256:
        raise RunMismatchError(
            f"{out_dir} holds a run of {_other(previous, run)}: --extend only adds items after the {before} "
            "it holds (a larger --limit of the same selection); use a new --out directory"
        )
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return previous.model_copy(
        update={
            "items": run.items,
            "ids_sha256": run.ids_sha256,
            "extended": [*previous.extended, Extension(from_items=before, items=len(ids), at=at)],
        }
    )


def _other(previous: RunMeta, run: RunMeta) -> str:
    if previous.items == run.items:
        return f"another selection of {run.items} items"
    return f"{previous.items} items, not these {run.items}"


def _difference(key: str, old: Any, new: Any) -> str:
    if old == new:
        return ""
    if isinstance(old, dict) and isinstance(new, dict):
        changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        return "; ".join(_difference(f"{key}.{k}", old.get(k), new.get(k)) for k in changed)
    return f"{key} {_shown(key, old)} → {_shown(key, new)}"


def _shown(key: str, value: Any) -> str:
    if value is None:
        return "(not recorded)"
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text[:12] + "…" if key.endswith("sha256") else text[:80]
