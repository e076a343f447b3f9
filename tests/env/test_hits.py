"""Snippets (CONTRACT.md §1.6) and the hit list (§1.9)."""

import pytest

from sws.env import NO_RESULTS, make_snippet, make_title_snippet, render_hits
from sws.types import Chunk, Hit


def hit(page_id: int, index: int, title: str, text: str) -> Hit:
    return Hit(Chunk(f"{page_id}_{index}", page_id, title, index, index + 1, text), 1.0, "keywords")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("a\nb", "a\nb"),
        ("x" * 1024, "x" * 1024),  # exactly the limit: whole
        ("x" * 1025, "x" * 1024 + "... (Omitted 1 characters)"),
        ("ab" * 1000, "ab" * 512 + "... (Omitted 976 characters)"),
        ("é" * 1030, "é" * 1024 + "... (Omitted 6 characters)"),  # code points, not bytes
        (
            "Section 0: Preamble\n" + "w " * 600,
            "Section 0: Preamble\n" + "w " * 502 + "... (Omitted 196 characters)",
        ),
    ],
)
def test_snippet_cut(text, expected):
    assert make_snippet(text) == expected


def test_snippet_cut_is_configurable():
    assert make_snippet("abcdef", 4) == "abcd... (Omitted 2 characters)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Section 0: Preamble\nUlm is a city.", "Section 0: Preamble Ulm is a city."),
        ("  a\n\n█b\t\tc█  ", "a b c"),
        ("\u3000x\u00a0\u00a0y\r\nz", "x y z"),  # Unicode whitespace runs collapse too
        ("█" * 600, ""),
        ("x" * 499 + "\nlost", "x" * 499),  # only the first 500 characters count
        ("y" * 600, "y" * 500),  # and no "Omitted" marker
    ],
)
def test_title_snippet(text, expected):
    assert make_title_snippet(text) == expected


def test_hits_golden():
    hits = [
        hit(736, 0, "Albert Einstein", "Section 0: Preamble\nAlbert Einstein was a physicist.\n"),
        hit(1234567, 2, "Einstein family", "   "),  # blank snippet: line left out
        hit(5, 9, "Last", "x" * 1030 + "\n\n"),
    ]
    assert render_hits(hits) == (
        "1. [Albert Einstein](https://en.wikipedia.org/wiki/736#chunk-1)\n"
        "   - Section 0: Preamble\n"
        "Albert Einstein was a physicist.\n"  # continuation lines are not indented
        "\n"
        "\n"
        "2. [Einstein family](https://en.wikipedia.org/wiki/1234567#chunk-3)\n"
        "\n"
        "3. [Last](https://en.wikipedia.org/wiki/5#chunk-10)\n"
        "   - " + "x" * 1024 + "... (Omitted 8 characters)"
    )


def test_hits_are_stripped_at_both_ends():
    assert render_hits([hit(1, 0, "T", "text ends in spaces  \n\n")]) == (
        "1. [T](https://en.wikipedia.org/wiki/1#chunk-1)\n   - text ends in spaces"
    )


def test_title_snippets_and_title_links():
    hits = [hit(42, 0, "C++ (lang)/x", "Section 0: Preamble\nC++ is a█language.")]
    assert render_hits(hits, title_snippets=True, link_mode="title") == (
        "1. [C++ (lang)/x](https://en.wikipedia.org/wiki/C%2B%2B_%28lang%29%2Fx#chunk-1)\n"
        "   - Section 0: Preamble C++ is a language."
    )


def test_missing_title_shows_the_page_id():
    assert (
        render_hits([hit(77, 0, "", "body")])
        == "1. [77](https://en.wikipedia.org/wiki/77#chunk-1)\n   - body"
    )


def test_no_results():
    assert NO_RESULTS == "No results found."
    assert render_hits([]) == "No results found."
