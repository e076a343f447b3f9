"""User query text -> a Tantivy query that never raises.

Plain words and balanced ``"quoted phrases"`` are honoured; every other query-syntax character
(``+ - : ^ ( ) [ ] { } ! ~ * AND OR NOT``...) is plain text (CONTRACT Part 1, 2). The query is
built from Tantivy's own parts instead of through its parser, with the parser's semantics for
escaped text: each whitespace-separated word is analysed like the indexed text; one token makes a
term query, several (``state-of-the-art``) a phrase; every term and phrase is searched in each field
with that field's boost, and all clauses are OR-ed, so BM25 scores equal the parser's. Like the
parser, a literal repeated verbatim counts once (``dog dog``), while different literals with the same
tokens count each (``dog Dog``): they become one clause with a multiplied boost (the same score).
A word's analysis is memoised per analyzer (:func:`word_leaves`): questions share most of their words, and
analysing them was a third of a keyword search's time on the bundled sample.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache, partial

import tantivy

_QUOTED = re.compile(r'"([^"]*)"')
Leaf = tuple[tuple[int, str], ...]  # (position, token) pairs; one pair is a term, more a phrase
WordLeaves = Callable[[str], Leaf]
CACHED_WORDS = 1 << 14
CACHED_CHARS = 64


def split_query(query: str) -> list[tuple[str, bool]]:
    """``(text, is_phrase)`` parts in order; an unbalanced quote is plain text."""
    parts, end = [], 0
    for match in _QUOTED.finditer(query):
        parts.append((query[end : match.start()], False))
        parts.append((match.group(1), True))
        end = match.end()
    parts.append((query[end:], False))
    return [(text, phrase) for text, phrase in parts if text.strip()]


def _leaf(analyzer: tantivy.TextAnalyzer, text: str) -> Leaf:
    tokens = analyzer.pre_tokenize(text).tokens
    if not tokens:
        return ()
    first = tokens[0].position
    return tuple((t.position - first, t.text) for t in tokens)


def word_leaves(analyzer: tantivy.TextAnalyzer, cached: int = CACHED_WORDS) -> WordLeaves:
    """A word's term or phrase under ``analyzer``, the last ``cached`` distinct words of at most
    :data:`CACHED_CHARS` characters remembered (a longer quoted phrase is analysed each time: the memo stays
    a few MB whatever the queries); ``cache_info()`` as :func:`functools.lru_cache`'s."""
    analysed = partial(_leaf, analyzer)
    memo = lru_cache(maxsize=cached)(analysed)

    def leaf_of(text: str) -> Leaf:
        return memo(text) if len(text) <= CACHED_CHARS else analysed(text)

    leaf_of.cache_info = memo.cache_info  # type: ignore[attr-defined]
    return leaf_of


def query_leaves(leaf_of: WordLeaves, query: str, max_leaves: int) -> Counter[Leaf]:
    """Distinct terms/phrases, each with the number of distinct literals giving it; at most ``max_leaves``."""
    literals = dict.fromkeys(
        (word, phrase) for text, phrase in split_query(query) for word in ([text] if phrase else text.split())
    )
    leaves: Counter[Leaf] = Counter()
    for text, _ in literals:
        leaf = leaf_of(text)
        if leaf and (leaf in leaves or len(leaves) < max_leaves):
            leaves[leaf] += 1
    return leaves


def build_query(
    schema: tantivy.Schema,
    leaf_of: WordLeaves,
    query: str,
    field_boosts: dict[str, float],
    max_leaves: int = 1024,
) -> tantivy.Query | None:
    """The OR of every term/phrase (``leaf_of`` a word: :func:`word_leaves`) over every field (None when the
    query has no tokens)."""
    clauses = []
    for leaf, count in query_leaves(leaf_of, query, max_leaves).items():
        for field, boost in field_boosts.items():
            if len(leaf) == 1:
                sub = tantivy.Query.term_query(schema, field, leaf[0][1])
            else:
                sub = tantivy.Query.phrase_query(schema, field, [(pos, tok) for pos, tok in leaf])
            weight = boost * count
            clauses.append(
                (tantivy.Occur.Should, sub if weight == 1.0 else tantivy.Query.boost_query(sub, weight))
            )
    return tantivy.Query.boolean_query(clauses) if clauses else None
