"""Vector shards aligned with chunk rows: one ``.npy`` per unit (a row range of one chunk part) + manifest.

Layout of a vectors directory::

    job.json              what the run embeds (corpus, embedder, dtype, units): a re-run must match it
    units/<part>-<start>.npy   (rows, dim) vectors of chunk rows start..stop of that part
    units/<part>-<start>.json  per-unit stats; written after the .npy, so it marks the unit done
    manifest.json         written last: units in corpus order, dim, fingerprints, totals
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sws.index.corpus import CorpusFiles
from sws.index.errors import FingerprintMismatchError, IndexCorruptError, IndexMissingError
from sws.manifest import digest, read_json_object

FORMAT = "sws-vectors/1"
DTYPES = ("float16", "float32")


@dataclass(frozen=True)
class Unit:
    """Chunk rows ``start:stop`` of chunk part ``part`` (index into the sorted part list)."""

    part: int
    start: int
    stop: int
    name: str  # "<part file stem>-<start:09d>"

    def npy(self, out: Path) -> Path:
        return out / "units" / f"{self.name}.npy"

    def stats(self, out: Path) -> Path:
        return out / "units" / f"{self.name}.json"

    def done(self, out: Path) -> bool:
        return self.stats(out).is_file() and self.npy(out).is_file()


def plan_units(corpus: CorpusFiles, rows_per_unit: int) -> list[Unit]:
    """Units in corpus row order, each at most ``rows_per_unit`` rows and never spanning two parts."""
    if rows_per_unit < 1:
        raise ValueError(f"rows_per_unit must be >= 1, got {rows_per_unit}")
    return [
        Unit(i, start, min(start + rows_per_unit, rows), f"{path.stem}-{start:09d}")
        for i, (path, rows) in enumerate(zip(corpus.chunk_parts, corpus.part_rows))
        for start in range(0, rows, rows_per_unit)
    ]


def job_record(corpus: CorpusFiles, spec: dict[str, Any], dtype: str, units: list[Unit]) -> dict[str, Any]:
    """What a run embeds; a resumed run must produce the same record."""
    return {
        "format": FORMAT,
        "corpus_fingerprint": corpus.fingerprint,
        "embedder": spec,
        "dtype": dtype,
        "units": [asdict(u) for u in units],
    }


def check_job(out: Path, record: dict[str, Any]) -> None:
    """Refuse to resume a vectors directory that was started for another corpus, embedder or layout."""
    path = out / "job.json"
    if path.is_file() and json.loads(path.read_text()) != record:
        raise FingerprintMismatchError(
            f"{out} holds vectors of another run (corpus, embedder, dtype or units differ from {path}); "
            "use a fresh output directory"
        )


@dataclass(frozen=True)
class VectorSet:
    """A finished vectors directory, read in corpus row order. Build with ``VectorSet.open(path)``."""

    path: Path
    manifest: dict[str, Any]

    @classmethod
    def open(cls, path: str | Path) -> VectorSet:
        """Raises IndexMissingError (no manifest or unit file), IndexCorruptError (bad shapes)."""
        path = Path(path)
        try:
            manifest = read_json_object(path / "manifest.json")
        except FileNotFoundError:
            raise IndexMissingError(f"no finished vectors at {path}: manifest.json is missing") from None
        except ValueError as exc:
            raise IndexCorruptError(f"unreadable {path / 'manifest.json'}: {exc}") from exc
        if manifest.get("format") != FORMAT:
            raise IndexCorruptError(f"{path / 'manifest.json'} is not {FORMAT}")
        vectors = cls(path, manifest)
        for unit, array in zip(vectors.units, vectors._arrays()):
            if array.shape != (unit.stop - unit.start, vectors.dim):
                raise IndexCorruptError(
                    f"{unit.npy(path)} has shape {array.shape}, expected "
                    f"({unit.stop - unit.start}, {vectors.dim})"
                )
        return vectors

    @property
    def units(self) -> list[Unit]:
        return [Unit(**u) for u in self.manifest["units"]]

    @property
    def dim(self) -> int:
        return int(self.manifest["dim"])

    @property
    def rows(self) -> int:
        return int(self.manifest["rows"])

    @property
    def corpus_fingerprint(self) -> str:
        return self.manifest["corpus_fingerprint"]

    @property
    def embedder_fingerprint(self) -> str:
        return self.manifest["embedder_fingerprint"]

    @property
    def fingerprint(self) -> str:
        return self.manifest["fingerprint"]

    def iter_blocks(self) -> Iterator[np.ndarray]:
        """float32 blocks, one per unit, in corpus row order."""
        for array in self._arrays():
            yield np.asarray(array, dtype=np.float32)

    def _arrays(self) -> Iterator[np.ndarray]:
        for unit in self.units:
            try:
                yield np.load(unit.npy(self.path), mmap_mode="r")
            except FileNotFoundError:
                raise IndexMissingError(f"vector shard missing: {unit.npy(self.path)}") from None
            except ValueError as exc:
                raise IndexCorruptError(f"unreadable vector shard {unit.npy(self.path)}: {exc}") from exc


def vectors_fingerprint(corpus_fingerprint: str, embedder_fingerprint: str, dtype: str) -> str:
    return digest({"corpus": corpus_fingerprint, "embedder": embedder_fingerprint, "dtype": dtype})
