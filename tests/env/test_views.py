"""Chunk and article views (CONTRACT.md §2.4, §2.5) and the open_url error strings."""

import pytest

from sws.env import (
    chunk_not_found,
    clean_view_text,
    missing_document,
    no_document,
    render_article_view,
    render_chunk_view,
)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("| | |", False),
        ("|", False),
        ("---", False),
        ("====", False),
        ("  - - -\t", False),
        ("I", False),  # quirk: a single-character line goes too
        ("5", False),
        ("aa", False),
        ("|---|---|", True),
        ("| 1879 | Born |", True),
        ("", True),
        ("   ", True),
        ("ab", True),
    ],
)
def test_filler_lines(line, kept):
    assert clean_view_text(f"top\n{line}\nend") == (f"top\n{line}\nend" if kept else "top\nend")


@pytest.mark.parametrize(
    ("line", "rendered"),
    [
        ("Section 0: Preamble", "## Section 0: Preamble"),
        ("Section 1: Early life", "## Section 1: Early life"),
        ("Section 2.1: Y", "## Section 2.1: Y"),
        ("Section 2.1.3: Z", "### Section 2.1.3: Z"),
        ("Section 1.2.3.4: Z", "#### Section 1.2.3.4: Z"),
        ("Section 1.2.3.4.5.6.7.8: Z", "###### Section 1.2.3.4.5.6.7.8: Z"),  # level clamped to 6
        ("   Section 4:   Indented   ", "## Section 4: Indented"),  # indentation and rest whitespace dropped
        ("Section 5:", "## Section 5"),  # empty rest
        ("Section 5 : spaced colon", "## Section 5: spaced colon"),
        ("Section   6: extra spaces", "## Section 6: extra spaces"),
        ("Section 7: a: b", "## Section 7: a: b"),
        ("Section X: no number", "Section X: no number"),
        ("Section 1.: dangling dot", "Section 1.: dangling dot"),
        ("Section 1 no colon", "Section 1 no colon"),
        ("Section\t1: tab", "Section\t1: tab"),  # must start with "Section "
        ("Sections 1: plural", "Sections 1: plural"),
        ("section 1: lower case", "section 1: lower case"),
        ("# Section 1: already", "# Section 1: already"),
        ("  Text Section 1: inside", "  Text Section 1: inside"),
    ],
)
def test_section_headings(line, rendered):
    assert clean_view_text(line) == rendered


def test_line_endings():
    assert clean_view_text("") == ""
    assert clean_view_text("ab\n") == "ab\n"
    assert clean_view_text("ab\n\n") == "ab\n\n"
    assert (
        clean_view_text("ab\r\ncd") == "ab\ncd"
    )  # headings are rendered line by line as str.splitlines sees them


def test_chunk_view_golden():
    text = "Section 2: Career\nHe worked in Bern.\n| a | b |\n| | |\n---\nSection 2.1.1: Patent office"
    assert render_chunk_view("Albert Einstein", 3, 12, text) == (
        "# Albert Einstein (chunk 3/12)\n"
        "\n"
        "## Section 2: Career\n"
        "He worked in Bern.\n"
        "| a | b |\n"
        "### Section 2.1.1: Patent office\n"
    )


def test_chunk_view_is_not_stripped_or_truncated():
    text = "\n  body  \n" + "zy" * 100_000 + "\n"
    assert render_chunk_view("T", 1, 1, text) == "# T (chunk 1/1)\n\n\n  body  \n" + "zy" * 100_000 + "\n\n"


def test_article_view_golden():
    texts = [
        "Section 0: Preamble\nUlm is a city.\n\n",
        "Section 1: History\n| | |\nOld.",
        "Section 1.1: Today\nNew.\n",
    ]
    assert render_article_view("Ulm", 3, texts) == (
        "# Ulm (ID: 3)\n"
        "\n"
        "## Section 0: Preamble\n"
        "Ulm is a city.\n"
        "\n"
        "\n"
        "\n"
        "## Section 1: History\n"
        "Old.\n"
        "\n"
        "## Section 1.1: Today\n"
        "New."
    )


def test_article_view_is_whole_by_default_and_can_be_capped():
    texts = ["wv" * 75_000, "ut" * 75_000]
    whole = render_article_view("Long", 1, texts)
    assert whole == "# Long (ID: 1)\n\n" + "wv" * 75_000 + "\n\n" + "ut" * 75_000
    capped = render_article_view("Long", 1, texts, max_chars=20)
    assert capped == "# Long (ID: 1)\n\nwvwv... (Omitted 299998 characters)"
    assert render_article_view("Short", 1, ["s"], max_chars=100) == "# Short (ID: 1)"  # "s" is a filler line


def test_error_strings():
    assert no_document("Nowhere_land") == "No document found for identifier: Nowhere_land"
    assert missing_document(999) == "Document with ID '999' not found."
    assert chunk_not_found("Albert_Einstein", 7) == "Chunk not found: Albert_Einstein#chunk-7"
