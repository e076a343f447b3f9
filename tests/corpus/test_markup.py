r"""The low-level scanners: top-level balanced spans, parameter splitting, and dropped elements (with their
content, whatever their case and attributes; an opening never closed goes alone, its text kept: the semantics
of ``<(ref|…)\b[^>]*>.*?</\1\s*>`` then ``<(ref|…)\b[^>]*>``, without their quadratic cost)."""

import pytest

from sws.corpus.markup import BRACKETS, balanced_spans, split_params, strip_comments_and_refs


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("a {{b}} c {{d}}", [(2, 7), (10, 15)]),
        ("{{a|{{b}}|{{c|{{d}}}}}}", [(0, 23)]),
        ("{{open {{b}} {{c}}", [(7, 12), (13, 18)]),  # the unclosed opener swallows nothing
        ("{{a}} }} {{b", [(0, 5)]),
        ("{{{{a}}}}}}", [(0, 9)]),
        ("no braces", []),
    ],
)
def test_balanced_spans_are_the_outermost_closed_pairs(text, spans):
    assert balanced_spans(text) == spans


def test_balanced_spans_of_links():
    assert balanced_spans("[[a|[[b]]]] x [[c", BRACKETS) == [(0, 11)]


@pytest.mark.parametrize(
    ("inner", "params"),
    [
        ("a|b|c", ["a", "b", "c"]),
        ("a", ["a"]),
        ("", [""]),
        ("a||b|", ["a", "", "b", ""]),
        ("a|{{b|c}}|[[d|e]]", ["a", "{{b|c}}", "[[d|e]]"]),
        ("a}}|b", ["a}}", "b"]),
        ("a|{{b|c", ["a", "{{b|c"]),
    ],
)
def test_split_params_on_top_level_pipes(inner, params):
    assert split_params(inner) == params


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a<ref>x</ref>b", "ab"),
        ('a<REF name="n">x</Ref >b<ref name=n />c', "abc"),
        ("a<ref>x</ref>b<ref>y</ref>c", "abc"),  # each opening ends at the first closing after it
        ("a<ref>x<ref>y</ref>b</ref>c", "ab</ref>c"),  # no nesting: a stray closing is left (as any tag)
        ("a<ref>x</gallery>b", "ax</gallery>b"),  # closed by another name: not closed
        ("a<gallery>x<ref>y</ref>b", "axb"),
        ("a<references>x</references>b<refx>y</refx>", "ab<refx>y</refx>"),
        ("a<!-- <ref> -->b</ref>c", "ab</ref>c"),
        ("<ref>" * 3 + "text", "text"),
    ],
)
def test_dropped_elements(text, expected):
    assert strip_comments_and_refs(text) == expected
