"""Tantivy keyword indexes: chunks (BM25, title boosted 2x), titles (one per page) and redirects."""

from sws.index.keyword.analyzers import TOKENIZERS, make_analyzer
from sws.index.keyword.indexer import TantivyIndexer
from sws.index.keyword.query import build_query, split_query
from sws.index.keyword.searcher import KeywordHit, TantivySearcher, TitleHit

__all__ = [
    "TOKENIZERS",
    "KeywordHit",
    "TantivyIndexer",
    "TantivySearcher",
    "TitleHit",
    "build_query",
    "make_analyzer",
    "split_query",
]
