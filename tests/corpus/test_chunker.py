"""Chunking on real samples: contiguous ids, exact token counts, the band, whole table rows, section lines."""

import itertools
import re

import pytest

from sws.config import CleanConfig
from sws.corpus.chunker import SectionChunker, clean_join
from sws.corpus.dump import DumpUnit, WikiDumpReader
from sws.corpus.sentences import split_sentences
from sws.corpus.tokens import token_counter
from sws.corpus.wikitext import Document, Section, WikitextConverter

SECTION_LINE = re.compile(r"^Section \d+(?:\.\d+)*: ")


@pytest.fixture(scope="module")
def chunked(wiki_samples):
    converter = WikitextConverter(drop_sections=CleanConfig().drop_sections)
    chunker = SectionChunker(token_counter("qwen3"))
    out = []
    for path in wiki_samples:
        for page in WikiDumpReader(DumpUnit(str(path))).pages():
            if page.ns == 0 and not page.redirect_to:
                doc = converter.convert(page.title, page.text, page.timestamp)
                out.append((doc, chunker.chunk(doc)))
    return chunker, out


def test_token_counts_are_the_tokenizers(chunked):
    chunker, docs = chunked
    for _, chunks in docs:
        for chunk in chunks:
            assert chunk.n_tokens == chunker.counter.count(chunk.text)


def test_every_chunk_starts_with_its_section_line(chunked):
    _, docs = chunked
    for doc, chunks in docs:
        for chunk in chunks:
            assert SECTION_LINE.match(chunk.text), chunk.text[:80]
            assert chunk.section in chunk.text.split("\n")


def test_band_holds_except_where_the_page_cannot(chunked):
    chunker, docs = chunked
    in_band = off_band = 0
    for doc, chunks in docs:
        if len(chunks) == 1:
            continue
        total = sum(c.n_tokens for c in chunks)
        for chunk in chunks:
            if chunker.min_tokens <= chunk.n_tokens <= chunker.max_tokens:
                in_band += 1
            else:
                off_band += 1
                # off the band only when a page's length leaves no way to cut it into chunks in the band,
                # or a single row or sentence is longer than the band
                feasible = any(
                    k * chunker.min_tokens <= total <= k * chunker.max_tokens
                    for k in range(1, len(chunks) + 2)
                )
                assert not feasible or chunk.n_tokens > chunker.max_tokens or off_band <= 0.05 * in_band
    assert in_band > 300 and off_band <= 0.05 * in_band


def test_table_rows_are_never_split(chunked):
    _, docs = chunked
    for doc, chunks in docs:
        rows = {line for line in doc.markdown.split("\n") if line.startswith("|")}
        for chunk in chunks:
            for line in chunk.text.split("\n"):
                if line.startswith("|"):
                    assert line in rows


def test_chunks_cover_the_document_text(chunked):
    _, docs = chunked
    for doc, chunks in docs:
        joined = " ".join(" ".join(c.text.split()) for c in chunks)
        for section in doc.sections:
            for line in section.body.split("\n"):
                for sentence in split_sentences(line):  # a line may be cut between sentences
                    assert " ".join(sentence.split()) in joined


def test_long_section_split_at_sentences_and_header_repeated():
    counter = token_counter("qwen3")
    sentence = "The quick brown fox jumps over the lazy dog near the river bank today. "
    body = sentence * 400
    doc = Document("T", [Section("0", "Preamble", "Lead."), Section("1", "Long", body.strip())])
    chunks = SectionChunker(counter, target_tokens=256).chunk(doc)
    assert len(chunks) > 3
    for chunk in chunks[1:]:
        assert chunk.text.startswith("Section 1: Long\n")
        assert chunk.text.endswith("today.")


def test_table_header_repeated_in_continuation_chunks():
    counter = token_counter("qwen3")
    rows = "\n".join(f"| {i} | value number {i} of the table |" for i in range(300))
    doc = Document("T", [Section("1", "Data", "| Key | Value |\n| --- | --- |\n" + rows)])
    chunks = SectionChunker(counter, target_tokens=256).chunk(doc)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("Section 1: Data\n| Key | Value |\n| --- | --- |\n")


def test_short_article_is_one_short_chunk():
    doc = Document("T", [Section("0", "Preamble", "Tiny article.")])
    chunks = SectionChunker(token_counter("qwen3")).chunk(doc)
    assert [c.text for c in chunks] == ["Section 0: Preamble\nTiny article."]


def test_bad_chunker_settings():
    with pytest.raises(ValueError):
        SectionChunker(token_counter("qwen3"), target_tokens=1536, tolerance=1.5)


JOINS = [  # (left, right, clean): the joins the chunker sums across, and near misses it must recount
    ("Foo bar.\n", "Baz", True),
    ("Foo bar.\n\n", "  - nested item", True),
    ("| a | b |\n", "| c | d |\n", True),
    ("It ended in 1990.", " The next", True),
    ("He said \u201cno.\u201d", " \u0301Then", True),
    ("Caf\u0065\n", "\u0301 x", True),
    ("x <|endoftext|>\n", "<|im_start|> y", True),
    ("Foo.", "\nBar", False),  # ".\n" is one pre-token
    ("Foo\n", "\nBar", False),  # "\n\n" is one pre-token
    ("Foo\n", "  \nBar", False),
    ("Foo\n", "\x1cBar", False),  # str.isspace but not the pattern's \s: refused
    ("Foo", "bar", False),
    ("Foo ", " bar", False),
    ("Foo.", "\tBar", False),
]


@pytest.mark.parametrize(("left", "right", "clean"), JOINS)
def test_clean_joins_sum_exactly(left, right, clean):
    counter = token_counter("qwen3")
    assert clean_join(left, right) is clean
    if clean:
        assert counter.count(left + right) == counter.count(left) + counter.count(right)


def test_clean_joins_sum_exactly_on_real_units(chunked):
    """Every adjacent pair of units of the samples (sentences of a line, lines of a body) that the chunker
    would sum across counts as the sum of its parts."""
    chunker, docs = chunked
    checked = 0
    for doc, _ in docs:
        for section in doc.sections:
            units = [u.text for u in chunker._units([section])]
            for left, right in itertools.pairwise(units):
                if clean_join(left, right):
                    joined = chunker.counter.count(left + right)
                    assert joined == chunker.counter.count(left) + chunker.counter.count(right)
                    checked += 1
    assert checked > 10_000


class _CharsCounter:
    """Not additive at any join: one token per started 4 characters."""

    name = "chars/4"
    sums_at_clean_joins = False

    def encode(self, text: str) -> list[int]:
        return list(range(-(-len(text) // 4)))

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_many(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


def test_other_tokenizers_count_whole_chunks():
    counter = _CharsCounter()
    body = "\n".join(f"Line {i} says a thing. Then another one." for i in range(200))
    chunks = SectionChunker(counter, target_tokens=128).chunk(Document("T", [Section("1", "S", body)]))
    assert len(chunks) > 3
    assert all(c.n_tokens == counter.count(c.text) for c in chunks)
