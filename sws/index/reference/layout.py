"""The reference's index layout (CONTRACT Part 2 §4): where each part lies and the Tantivy fields it reads.

``OUT/tantivy/chunk-1536/{chunks,titles}/`` and ``OUT/faiss/hnsw-<model>-chunk-1536-fp16/{index.faiss,
ids.pkl}``. The reference opens the Tantivy indexes without registering a tokenizer, so their text fields
use one of Tantivy's built-in tokenizers, and ``doc_id`` the ``raw`` one: its phrase query ``"<id>"`` is one
exact term.
"""

from __future__ import annotations

import json
from pathlib import Path

import tantivy

from sws.index.errors import IndexCorruptError, IndexMissingError

TANTIVY_DIR = Path("tantivy/chunk-1536")
CHUNKS_DIR, TITLES_DIR = TANTIVY_DIR / "chunks", TANTIVY_DIR / "titles"
INDEX_FILE, IDS_FILE = "index.faiss", "ids.pkl"
METRICS = ("ip", "l2")
# sws keyword tokenizer -> the Tantivy built-in that analyses text the same way (the ASCII-folding ones have none)
BUILTIN_TOKENIZERS = {"default": "default", "en_stem": "en_stem"}


def faiss_dir(model: str) -> Path:
    """``faiss/hnsw-<model>-chunk-1536-fp16`` (the reference's: ``hnsw-Qwen3-Embedding-0.6B-chunk-1536-fp16``)."""
    if not model or "/" in model or model in (".", ".."):
        raise ValueError(f"model name {model!r} cannot name a folder: give its last path part")
    return Path("faiss") / f"hnsw-{model}-chunk-1536-fp16"


def builtin_tokenizer(tokenizer: str) -> str:
    """The Tantivy built-in tokenizer for an sws keyword tokenizer.

    Raises:
        ValueError: it has none, so the reference could not query the exported text fields.
    """
    if tokenizer not in BUILTIN_TOKENIZERS:
        raise ValueError(
            f"keyword tokenizer {tokenizer!r} has no Tantivy built-in equivalent (the reference registers none); "
            f"exportable: {', '.join(BUILTIN_TOKENIZERS)}"
        )
    return BUILTIN_TOKENIZERS[tokenizer]


def chunks_schema(tokenizer: str) -> tantivy.Schema:
    """One document per chunk: ``doc_id`` (page id), ``doc_title``, ``text``, ``chunk_id``; all stored."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("doc_title", stored=True, tokenizer_name=tokenizer)
    sb.add_text_field("text", stored=True, tokenizer_name=tokenizer)
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw", index_option="basic")
    return sb.build()


def titles_schema(tokenizer: str) -> tantivy.Schema:
    """One document per page: ``doc_id`` and ``doc_title``, both stored."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("doc_title", stored=True, tokenizer_name=tokenizer)
    return sb.build()


def tantivy_tokenizers(path: Path) -> dict[str, str | None]:
    """Each field of the Tantivy index at ``path`` with its tokenizer, as its ``meta.json`` says (None: not
    indexed, or not a text field).

    Raises:
        IndexMissingError: no ``meta.json``.
        IndexCorruptError: it is not Tantivy's meta.json.
    """
    meta = path / "meta.json"
    try:
        schema = json.loads(meta.read_text())["schema"]
        return {f["name"]: ((f.get("options") or {}).get("indexing") or {}).get("tokenizer") for f in schema}
    except FileNotFoundError:
        raise IndexMissingError(f"Tantivy index missing: {meta} not found") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise IndexCorruptError(f"unreadable Tantivy {meta}: {exc!r}") from exc


def sws_tokenizer(builtin: str | None, where: str) -> str:
    """The sws analyzer that analyses query text as the Tantivy built-in ``builtin`` analyses the index.

    Raises:
        IndexCorruptError: none does (sws could not make query terms that match the indexed ones).
    """
    for tokenizer, name in BUILTIN_TOKENIZERS.items():
        if name == builtin:
            return tokenizer
    raise IndexCorruptError(
        f"{where} is tokenized with {builtin!r}: sws reads text fields tokenized with "
        f"{', '.join(BUILTIN_TOKENIZERS.values())}"
    )
