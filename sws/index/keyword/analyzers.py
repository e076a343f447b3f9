"""Tantivy text analyzers, and the tokenizer choice.

The reference never states its tokenizer (CONTRACT §4.4). We default to ``default``, Tantivy's own
``default`` pipeline (split on non-alphanumerics, drop tokens of 40+ bytes, lowercase, no stemming,
no stop words): it is the natural reading of the reference, keeps names and numbers exact, and
keeps keyword hits lexical as the tool description promises ("lexical exact-token matching").
``en_stem`` adds the English Snowball stemmer (more recall, less exactness); ``default_ascii``
and ``en_stem_ascii`` also fold accents (``Gödel`` matches ``Godel``).

The same analyzer object is registered on the index when it is built and opened, and is run in
Python on query text, so query terms are exactly the indexed terms.
"""

from __future__ import annotations

import tantivy

TOKENIZERS = ("default", "en_stem", "default_ascii", "en_stem_ascii")


def make_analyzer(name: str) -> tantivy.TextAnalyzer:
    """The analyzer for a tokenizer choice in ``TOKENIZERS``.

    Raises:
        ValueError: unknown name.
    """
    if name not in TOKENIZERS:
        raise ValueError(f"unknown keyword tokenizer {name!r} (known: {', '.join(TOKENIZERS)})")
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
    builder = builder.filter(tantivy.Filter.lowercase())
    if name.endswith("_ascii"):
        builder = builder.filter(tantivy.Filter.ascii_fold())
    if name.startswith("en_stem"):
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def analyzer_name(name: str) -> str:
    """The name the analyzer is registered under inside the index."""
    return f"sws_{name}"


def register(index: tantivy.Index, name: str) -> tantivy.TextAnalyzer:
    analyzer = make_analyzer(name)
    index.register_tokenizer(analyzer_name(name), analyzer)
    return analyzer
