"""``open_reference``: the keyword and dense searchers of an imported reference-layout index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sws.index.reference.dense import ReferenceFaissSearcher
from sws.index.reference.keys import KEYS_FILE, ChunkKeys
from sws.index.reference.keyword import ReferenceTantivySearcher
from sws.index.reference.layout import INDEX_FILE


def open_reference(
    path: Path, manifest: dict[str, Any], ef_search: int | None = None, max_query_terms: int = 1024
) -> tuple[ReferenceTantivySearcher, ReferenceFaissSearcher]:
    """The searchers of the index at ``path`` (its manifest marked ``"layout": "reference"``), sharing its
    memory-mapped chunk keys.

    Raises:
        IndexMissingError / IndexCorruptError naming the file at fault.
    """
    keys = ChunkKeys(path / KEYS_FILE)
    keyword = ReferenceTantivySearcher(
        path, manifest["keyword"]["params"]["tokenizer"], keys, max_query_terms
    )
    dense = ReferenceFaissSearcher(path / manifest["dense"]["dir"] / INDEX_FILE, keys, ef_search)
    return keyword, dense
