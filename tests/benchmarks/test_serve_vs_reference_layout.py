"""``benchmarks/serve_vs_reference_layout.py``: how it reads observations and judges ties, on strings in the
contract's format (no servers)."""

from __future__ import annotations

from tests.benchmarks.conftest import bench_module, skips_without_harness


def observation(*hits: tuple[int, str, str]) -> str:
    """A search observation (CONTRACT §1.9) of ``(page_id, chunk number, snippet)`` hits."""
    lines = []
    for i, (page, n, snippet) in enumerate(hits, 1):
        lines += [
            f"{i}. [Page {page}](https://en.wikipedia.org/wiki/{page}#chunk-{n})",
            f"   - {snippet}",
            "",
        ]
    return "\n".join(lines).strip()


def test_hits_are_read_with_their_multi_line_snippets():
    bench = bench_module("serve_vs_reference_layout")
    text = observation((7, 1, "one\n\nstill one"), (9, 3, "two"))
    assert bench.hits(text) == [
        ("7_0", "[Page 7](https://en.wikipedia.org/wiki/7#chunk-1)\n   - one\n\nstill one"),
        ("9_2", "[Page 9](https://en.wikipedia.org/wiki/9#chunk-3)\n   - two"),
    ]
    assert bench.hits("No results found.") == []


def test_rrf_ties_are_the_references_float_sums():
    bench = bench_module("serve_vs_reference_layout")
    score = bench.rrf_scores(["a", "b", "c"], ["d", "b", "a"])
    assert score["a"] == 1 / 61 + 1 / 63 and score["b"] == 1 / 62 + 1 / 62
    assert score["c"] != score["d"]  # keyword-only rank 3, vector-only rank 1
    assert bench.rrf_scores(["x", "y"], ["z", "y"]) == {"x": 1 / 61, "z": 1 / 61, "y": 1 / 62 + 1 / 62}


def test_an_observation_equals_another_up_to_its_ties_only():
    bench = bench_module("serve_vs_reference_layout")
    theirs = [("a", "A"), ("b", "B"), ("c", "C")]
    score, text = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0}, {"a": "A", "b": "B", "c": "C", "d": "D"}
    assert bench.tie_equal(theirs, [("a", "A"), ("c", "C"), ("b", "B")], score, text)  # swapped in a tie
    assert bench.tie_equal(theirs, [("a", "A"), ("b", "B"), ("d", "D")], score, text)  # the cut tie class
    assert not bench.tie_equal(theirs, [("b", "B"), ("a", "A"), ("c", "C")], score, text)  # not a tie
    assert not bench.tie_equal(theirs, [("a", "A"), ("b", "B"), ("c", "other")], score, text)  # its text
    assert not bench.tie_equal(theirs, [("a", "A"), ("b", "B"), ("b", "B")], score, text)  # a hit twice
    assert not bench.tie_equal(theirs, [("a", "A"), ("b", "B")], score, text)


def test_a_sanitized_query_keeps_its_terms_and_drops_the_syntax():
    bench = bench_module("serve_vs_reference_layout")
    assert bench.sanitized('Who is "Jean Martin (Singer)"\'s AND-husband: NOT x?') == (
        "Who is  Jean Martin  Singer   s and husband  not x "
    )


def test_the_urls_opened_are_each_hits_chunk_article_and_title():
    bench = bench_module("serve_vs_reference_layout")
    row = {"reference": observation((7, 2, "x")), "sws": observation((7, 2, "x"), (9, 1, "y"))}
    row["sws"] = row["sws"].replace("[Page 9]", "[C++ (lang)/x]")
    base = "https://en.wikipedia.org/wiki/"
    assert bench.open_urls([row]) == [
        ("chunk", f"{base}7#chunk-2"),
        ("article", f"{base}7"),
        ("title", f"{base}Page_7"),
        ("chunk", f"{base}9#chunk-1"),
        ("article", f"{base}9"),
        ("title", f"{base}C%2B%2B_%28lang%29%2Fx"),
    ]


def test_without_the_harness_it_says_so_and_exits_0(tmp_path):
    assert skips_without_harness("serve_vs_reference_layout", tmp_path)
