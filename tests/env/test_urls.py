"""URL building (CONTRACT.md §1.9) and the §2.2 parsing quirks."""

import pytest

from sws.env import WikiUrl, chunk_url, parse_wiki_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://en.wikipedia.org/wiki/736#chunk-1", WikiUrl("736", 1)),
        ("https://en.wikipedia.org/wiki/736", WikiUrl("736")),
        ("  https://en.wikipedia.org/wiki/736#chunk-3  ", WikiUrl("736", 3)),
        # scheme and host are not checked
        ("http://example.com/wiki/736#chunk-2", WikiUrl("736", 2)),
        ("/wiki/736#chunk-2", WikiUrl("736", 2)),
        ("ftp://x/wiki/Albert_Einstein", WikiUrl("Albert_Einstein")),
        # identifier: percent-decoded and stripped, underscores kept
        ("https://en.wikipedia.org/wiki/C%2B%2B_%28lang%29%2Fx#chunk-1", WikiUrl("C++_(lang)/x", 1)),
        ("/wiki/%20Ulm%20", WikiUrl("Ulm")),
        ("/wiki/a/b", WikiUrl("a/b")),
        # ?query is ignored, so an unencoded ? cuts the identifier
        ("/wiki/Who?x=1", WikiUrl("Who")),
        ("/wiki/Who?x=1#chunk-2", WikiUrl("Who", 2)),
        # fragments: only chunk-N with N > 0 selects a chunk, leading zeros allowed
        ("/wiki/736#chunk-07", WikiUrl("736", 7)),
        ("/wiki/736#chunk-0", WikiUrl("736")),
        ("/wiki/736#chunk-00", WikiUrl("736")),
        ("/wiki/736#Chunk-2", WikiUrl("736")),
        ("/wiki/736#chunk-2a", WikiUrl("736")),
        ("/wiki/736#chunk--2", WikiUrl("736")),
        ("/wiki/736#chunk-", WikiUrl("736")),
        ("/wiki/736#History", WikiUrl("736")),
        ("/wiki/736#", WikiUrl("736")),
        ("/wiki/736# chunk-2", WikiUrl("736", 2)),  # the fragment is stripped
        ("/wiki/736#chunk-" + "9" * 5000, WikiUrl("736")),  # too many digits for int(): the article
        # invalid
        ("", None),
        ("   ", None),
        ("/wiki/", None),
        ("/wiki/%20", None),
        ("/wiki/#chunk-1", None),
        ("wiki/123", None),
        ("https://en.wikipedia.org/w/index.php?title=X", None),
        ("https://en.wikipedia.org/Wiki/X", None),
        ("736", None),
        ("http://[::1/wiki/X", None),  # urlparse raises
        ("https://en.wikipedia.org/wiki%2FX", None),
    ],
)
def test_parse_wiki_url(url, expected):
    assert parse_wiki_url(url) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((736, 0, "Albert Einstein"), "https://en.wikipedia.org/wiki/736#chunk-1"),
        ((1234567, 2, "Einstein family", "wikiid"), "https://en.wikipedia.org/wiki/1234567#chunk-3"),
        ((736, 0, "Albert Einstein", "title"), "https://en.wikipedia.org/wiki/Albert_Einstein#chunk-1"),
        ((42, 4, " C++ (lang)/x ", "title"), "https://en.wikipedia.org/wiki/C%2B%2B_%28lang%29%2Fx#chunk-5"),
        ((9, 0, "Who? #1", "title"), "https://en.wikipedia.org/wiki/Who%3F_%231#chunk-1"),
        ((9, 0, "Zürich", "title"), "https://en.wikipedia.org/wiki/Z%C3%BCrich#chunk-1"),
        ((9, 0, "", "title"), "https://en.wikipedia.org/wiki/9#chunk-1"),  # empty title: the page id
        ((9, 0, "  ", "title"), "https://en.wikipedia.org/wiki/9#chunk-1"),
    ],
)
def test_chunk_url(args, expected):
    assert chunk_url(*args) == expected


@pytest.mark.parametrize("title", ["Albert Einstein", "C++ (lang)/x", "Who? #1", "Zürich", "100% (song)"])
def test_title_links_parse_back(title):
    target = parse_wiki_url(chunk_url(1, 3, title, "title"))
    assert target == WikiUrl(title.replace(" ", "_"), 4)
