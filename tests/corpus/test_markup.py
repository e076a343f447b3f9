"""The low-level scanners: top-level balanced spans and parameter splitting."""

import pytest

from sws.corpus.markup import BRACKETS, balanced_spans, split_params


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
