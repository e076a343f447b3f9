"""Read-only view of a built corpus: chunk, redirect and manifest files in corpus row order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sws.corpus.schema import CHUNKS, REDIRECTS
from sws.index.errors import CorpusError, EmptyCorpusError
from sws.manifest import read_json_object


def _parts(root: Path, table: str) -> tuple[Path, ...]:
    return tuple(sorted((root / table).glob("part-*.parquet")))


def _check_columns(path: Path, schema: pa.Schema) -> int:
    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"unreadable corpus file {path}: {exc}") from exc
    missing = [name for name in schema.names if name not in meta.schema.names]
    if missing:
        raise CorpusError(f"corpus file {path} lacks columns {missing}")
    return meta.num_rows


@dataclass(frozen=True)
class CorpusFiles:
    """A corpus directory (``chunks/``, ``redirects/``, ``manifest.json``); part files in sorted name order.

    Build with ``CorpusFiles.open(root)``; global chunk row r is row r of the concatenated chunk parts.
    """

    root: Path
    fingerprint: str
    chunk_parts: tuple[Path, ...]
    part_rows: tuple[int, ...]
    redirect_parts: tuple[Path, ...]

    @classmethod
    def open(cls, root: str | Path) -> CorpusFiles:
        """Check the manifest and chunk parts exist and are readable.

        Raises:
            CorpusError: no manifest or fingerprint, no chunk parts, unreadable part, missing columns.
            EmptyCorpusError: the chunk parts hold no rows.
        """
        root = Path(root)
        manifest = root / "manifest.json"
        try:
            fingerprint = read_json_object(manifest)["fingerprint"]
        except FileNotFoundError:
            raise CorpusError(
                f"no corpus at {root}: {manifest} is missing (build the corpus first)"
            ) from None
        except (ValueError, KeyError) as exc:
            raise CorpusError(f"{manifest} has no readable 'fingerprint': {exc!r}") from exc
        chunk_parts = _parts(root, "chunks")
        if not chunk_parts:
            raise CorpusError(f"corpus {root} has no chunks/part-*.parquet files")
        part_rows = tuple(_check_columns(p, CHUNKS) for p in chunk_parts)
        if sum(part_rows) == 0:
            raise EmptyCorpusError(f"corpus {root} has no chunks ({len(chunk_parts)} empty part files)")
        redirect_parts = _parts(root, "redirects")
        for part in redirect_parts:
            _check_columns(part, REDIRECTS)
        return cls(root, str(fingerprint), chunk_parts, part_rows, redirect_parts)

    @property
    def num_chunks(self) -> int:
        return sum(self.part_rows)

    def iter_chunks(self, columns: list[str], batch_rows: int = 4096) -> Iterator[pa.RecordBatch]:
        """Chunk rows in corpus order."""
        for part in self.chunk_parts:
            yield from pq.ParquetFile(part).iter_batches(batch_size=batch_rows, columns=columns)

    def iter_redirects(self, batch_rows: int = 65536) -> Iterator[pa.RecordBatch]:
        for part in self.redirect_parts:
            yield from pq.ParquetFile(part).iter_batches(batch_size=batch_rows, columns=REDIRECTS.names)

    def read_chunk_rows(self, part: int, start: int, stop: int, columns: list[str]) -> pa.Table:
        """Rows ``start:stop`` of one chunk part, reading only the row groups that hold them."""
        parquet = pq.ParquetFile(self.chunk_parts[part])
        groups, offset, first = [], 0, 0
        for group in range(parquet.metadata.num_row_groups):
            rows = parquet.metadata.row_group(group).num_rows
            if offset < stop and offset + rows > start:
                first = offset if not groups else first
                groups.append(group)
            offset += rows
        return parquet.read_row_groups(groups, columns=columns).slice(start - first, stop - start)
