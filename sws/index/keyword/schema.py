"""Field layout of the three Tantivy indexes: chunks, titles, redirects."""

from __future__ import annotations

import tantivy

from sws.index.keyword.analyzers import analyzer_name

CHUNKS_DIR, TITLES_DIR, REDIRECTS_DIR = "chunks", "titles", "redirects"
CHUNK_FIELD_BOOSTS = {"text": 1.0, "title": 2.0}  # CONTRACT §1.4: title boosted 2x over text
TITLE_FIELD_BOOSTS = {"title": 1.0}  # CONTRACT §1.5: titles only, no boost


def fold(title: str) -> str:
    """Key of the case-insensitive title lookup."""
    return title.casefold()


def chunks_schema(tokenizer: str) -> tantivy.Schema:
    """One document per chunk; ``row`` is the global corpus row (= FAISS row), used to break score ties."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("row", stored=True, indexed=True, fast=True)
    sb.add_integer_field("page_id", stored=True, indexed=True, fast=True)
    sb.add_text_field("title", stored=True, tokenizer_name=analyzer_name(tokenizer))
    sb.add_integer_field("chunk_index", stored=True)
    sb.add_integer_field("n_chunks", stored=True)
    sb.add_text_field("text", stored=True, tokenizer_name=analyzer_name(tokenizer))
    return sb.build()


def titles_schema(tokenizer: str) -> tantivy.Schema:
    """One document per page; ``row`` is the corpus row of its chunk 0."""
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("page_id", stored=True, indexed=True, fast=True)
    sb.add_integer_field("row", stored=True, fast=True)
    sb.add_integer_field("n_chunks", stored=True)
    sb.add_text_field("title", stored=True, tokenizer_name=analyzer_name(tokenizer))
    sb.add_text_field("title_exact", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("title_folded", tokenizer_name="raw", index_option="basic")
    return sb.build()


def redirects_schema() -> tantivy.Schema:
    """One document per redirect page: its title (exact and folded) and the target title."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("title_exact", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("title_folded", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("target", stored=True, tokenizer_name="raw", index_option="basic")
    return sb.build()
