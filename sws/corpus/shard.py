"""One shard of the corpus build: a dump unit -> docs, chunks and redirects Parquet plus its stats.

Plain Python over one :class:`~sws.corpus.dump.DumpUnit`; the Ray job only runs many of these in parallel.
A shard's stats file is written last (atomically), so its presence means the shard is complete; it also names
the Ray node that built the shard.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sws.corpus import schema
from sws.corpus.chunker import SectionChunker
from sws.corpus.dump import DumpUnit, WikiDumpReader
from sws.corpus.pages import Page
from sws.corpus.tokens import token_counter
from sws.corpus.wikitext import WikitextConverter
from sws.io import write_atomically
from sws.raykit import current_node_id

logger = logging.getLogger(__name__)
TABLES = {"chunks": schema.CHUNKS, "docs": schema.DOCS, "redirects": schema.REDIRECTS}
ROW_COUNTS = {"chunks": "chunks", "docs": "articles", "redirects": "redirects"}  # table -> its stats count


def shard_name(index: int) -> str:
    return f"part-{index:05d}"


def stats_path(out_dir: str | Path, index: int) -> Path:
    return Path(out_dir) / "_stats" / f"{shard_name(index)}.json"


def part_path(out_dir: str | Path, table: str, index: int) -> Path:
    return Path(out_dir) / table / f"{shard_name(index)}.parquet"


def shard_damage(out_dir: str | Path, index: int) -> str | None:
    """Why a shard that has its stats file cannot be kept, or None when every part reads as its stats say.

    A part must have a readable Parquet footer and as many rows as the stats record; the data pages are not
    read, so this is cheap enough to run on every resume.
    """
    try:
        counts = json.loads(stats_path(out_dir, index).read_text())["counts"]
    except (OSError, ValueError, KeyError) as exc:
        return f"its stats file is unreadable ({exc})"
    for table, key in ROW_COUNTS.items():
        path = part_path(out_dir, table, index)
        try:
            rows = pq.ParquetFile(path).metadata.num_rows
        except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
            return f"{table}/{path.name} is unreadable ({exc})"
        if rows != counts.get(key, 0):
            return f"{table}/{path.name} has {rows} rows, its stats record {counts.get(key, 0)}"
    return None


class CorpusShardBuilder:
    """Reads one dump unit and writes its shard of the corpus.

    Args:
        out_dir: the corpus directory.
        converter: wikitext -> Markdown.
        chunker: Markdown -> token chunks.
        drop_disambiguation: skip disambiguation pages (else keep them, flagged).
    """

    def __init__(
        self,
        out_dir: str | Path,
        converter: WikitextConverter,
        chunker: SectionChunker,
        drop_disambiguation: bool,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.converter = converter
        self.chunker = chunker
        self.drop_disambiguation = drop_disambiguation

    @classmethod
    def from_options(cls, out_dir: str | Path, clean: dict, chunk: dict) -> CorpusShardBuilder:
        """Build from the plain ``clean`` and ``chunk`` config sections."""
        clean = dict(clean)
        drop_disambiguation = clean.pop("drop_disambiguation")
        converter = WikitextConverter(**clean)
        chunker = SectionChunker(
            token_counter(chunk["tokenizer"]),
            target_tokens=chunk["target_tokens"],
            tolerance=chunk["tolerance"],
        )
        return cls(out_dir, converter, chunker, drop_disambiguation)

    def build(self, index: int, unit: DumpUnit) -> dict:
        """Process the unit, write its Parquet files and stats; returns the stats."""
        started = time.perf_counter()
        counts: Counter = Counter()
        rows: dict[str, list[dict]] = {name: [] for name in TABLES}
        reader = WikiDumpReader(unit)
        for page in reader.pages():
            counts["pages"] += 1
            try:
                self._process(page, counts, rows)
            except Exception:  # a bug costs one page, counted and logged, never the shard
                counts["skipped_processing_error"] += 1
                logger.exception("page %s (%r) failed; skipped", page.page_id, page.title)
        incomplete = reader.pages_started - counts["pages"] - reader.pages_malformed
        counts["pages"] += reader.pages_malformed + incomplete
        counts["skipped_malformed_page"] += reader.pages_malformed
        counts["skipped_truncated_page"] += incomplete
        counts["invalid_utf8_replacements"] += reader.invalid_utf8
        counts["entity_errors"] += reader.entity_errors
        counts["input_bytes"] += reader.bytes_read
        for name, table_schema in TABLES.items():
            table = pa.Table.from_pylist(rows[name], schema=table_schema)
            write_atomically(
                part_path(self.out_dir, name, index),
                lambda tmp, table=table: pq.write_table(table, tmp, compression="zstd"),
            )
        stats = {
            "shard": index,
            "unit": unit.label,
            "counts": {k: v for k, v in sorted(counts.items()) if v},
            "input_error": reader.error,
            "seconds": round(time.perf_counter() - started, 3),
            "node_id": current_node_id(),  # the Ray node that built it (None outside Ray)
        }
        write_atomically(
            stats_path(self.out_dir, index), lambda tmp: tmp.write_text(json.dumps(stats, indent=1))
        )
        return stats

    def _process(self, page: Page, counts: Counter, rows: dict[str, list[dict]]) -> None:
        if page.ns != 0:
            counts["other_namespace"] += 1
            return
        if page.redirect_to is not None:
            counts["redirects"] += 1
            rows["redirects"].append(
                {"page_id": page.page_id, "title": page.title, "target": page.redirect_to, "ns": page.ns}
            )
            return
        disambiguation = page.is_disambiguation
        if disambiguation and self.drop_disambiguation:
            counts["skipped_disambiguation"] += 1
            return
        counts["wikitext_chars"] += len(page.text)
        doc = self.converter.convert(page.title, page.text, page.timestamp)
        if doc.converter != "markdown":
            counts["plaintext_fallback"] += 1
        chunks = self.chunker.chunk(doc) if any(s.body for s in doc.sections) else []
        if not chunks:
            counts["skipped_empty"] += 1
            return
        counts["articles"] += 1
        counts["disambiguation"] += disambiguation
        counts["chunks"] += len(chunks)
        n_tokens = sum(c.n_tokens for c in chunks)
        counts["tokens"] += n_tokens
        if len(chunks) > 1:
            counts["chunks_below_band"] += sum(c.n_tokens < self.chunker.min_tokens for c in chunks)
        counts["chunks_above_band"] += sum(c.n_tokens > self.chunker.max_tokens for c in chunks)
        rows["docs"].append(
            {
                "page_id": page.page_id,
                "title": page.title,
                "revision_id": page.revision_id,
                "timestamp": page.timestamp,
                "is_disambiguation": disambiguation,
                "converter": doc.converter,
                "sections": [s.line for s in doc.sections],
                "markdown": doc.markdown,
                "n_tokens": n_tokens,
            }
        )
        rows["chunks"].extend(
            {
                "chunk_id": f"{page.page_id}_{i}",
                "page_id": page.page_id,
                "title": page.title,
                "chunk_index": i,
                "n_chunks": len(chunks),
                "section": chunk.section,
                "text": chunk.text,
                "n_tokens": chunk.n_tokens,
            }
            for i, chunk in enumerate(chunks)
        )
