"""Argument handling: CONTRACT.md part 2 §1.2 as improved by part 1."""

import json

import pytest

from sws.env import OpenUrlArgs, SearchArgs, coerce_bool, coerce_top_k, normalize_method, parse_arguments


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, 5),
        (5.7, 5),  # int() truncates
        ("7", 7),
        (" 7 ", 7),
        ("5.5", 10),  # not an int literal: default
        (None, 10),
        ([3], 10),
        ({"k": 3}, 10),
        (0, 10),  # < 1: default, not 1
        (-3, 10),
        (0.5, 10),
        (True, 1),  # JSON true is an int in Python, as in the reference
        (50, 50),
        (51, 50),  # clamped (deviation: the reference has no maximum)
        (10**30, 50),
        (float("inf"), 10),
        (float("nan"), 10),
        ("9" * 5000, 10),  # beyond Python's int-string limit
    ],
)
def test_top_k(value, expected):
    assert coerce_top_k(value) == expected


def test_top_k_maximum_is_configurable():
    assert coerce_top_k(500, max_top_k=200) == 200
    assert coerce_top_k(500, max_top_k=1000) == 500


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (None, False),
        (1, True),
        (0, False),
        (1.0, True),
        ("true", True),
        (" TRUE ", True),
        ("yes", True),
        ("on", True),
        ("1", True),
        ("false", False),  # the reference's truthiness made this True
        ("False", False),
        ("0", False),
        ("no", False),
        ("off", False),
        ("", False),
        ("null", False),
    ],
)
def test_only_title_is_a_real_boolean(value, expected):
    assert coerce_bool(value, "only_title") is expected


@pytest.mark.parametrize("value", ["maybe", 2, -1, 0.5, [], [True], {}, float("nan")])
def test_non_boolean_only_title_is_an_error(value):
    with pytest.raises(ValueError, match="only_title must be true or false"):
        coerce_bool(value, "only_title")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("rrf", "rrf"),
        ("mix", "rrf"),
        ("", "rrf"),
        (None, "rrf"),
        ("  RRF ", "rrf"),
        ("keywords", "keywords"),
        ("keyword", "keywords"),
        ("kw", "keywords"),
        ("KWS", "keywords"),
        ("vector", "vector"),
        ("Vec", "vector"),
    ],
)
def test_method_aliases(value, expected):
    assert normalize_method(value) == expected


@pytest.mark.parametrize("value", ["bm25", "hybrid", "vectors", 3, ["rrf"]])
def test_unknown_method_is_an_error(value):
    with pytest.raises(ValueError, match="Unknown search method .*: use one of rrf, keywords, vector"):
        normalize_method(value)


def test_long_values_are_shortened_in_messages():
    with pytest.raises(ValueError) as caught:
        normalize_method("x" * 10_000)
    assert len(str(caught.value)) < 200
    assert "more characters" in str(caught.value)


def test_search_args_defaults_and_stripping():
    assert SearchArgs.parse({"query": "  Ulm \n"}) == SearchArgs("Ulm", 10, False, "rrf")
    assert SearchArgs.parse(
        {"query": 1984, "top_k": "3", "only_title": "no", "method": "kw", "extra": 1}
    ) == (SearchArgs("1984", 3, False, "keywords"))


@pytest.mark.parametrize("args", [{}, {"query": None}, {"query": ""}, {"query": " \n\t"}, {"query": 0}])
def test_empty_query_is_an_error(args):
    with pytest.raises(ValueError, match="^query is empty$"):
        SearchArgs.parse(args)


def test_parse_arguments_is_strict_json_object():
    assert parse_arguments('{"query": "x"}') == {"query": "x"}
    with pytest.raises(json.JSONDecodeError):
        parse_arguments("{'query': 'x'}")
    with pytest.raises(json.JSONDecodeError):
        parse_arguments("")
    for text, kind in [
        ("[1]", "array"),
        ('"x"', "string"),
        ("3", "number"),
        ("true", "boolean"),
        ("null", "null"),
    ]:
        with pytest.raises(TypeError, match=f"must be a JSON object, got {kind}$"):
            parse_arguments(text)


def test_required_url():
    assert OpenUrlArgs.parse({"url": " /wiki/1 "}).url == " /wiki/1 "
    assert OpenUrlArgs.parse({"url": 736}).url == "736"
    for args in ({}, {"url": None}):
        with pytest.raises(ValueError, match="missing required argument 'url'"):
            OpenUrlArgs.parse(args)


def test_query_length_bound_and_lone_surrogates():
    with pytest.raises(ValueError, match="query is too long"):
        SearchArgs.parse({"query": "x" * 4097})
    assert SearchArgs.parse({"query": "x" * 4096}).query == "x" * 4096
    assert SearchArgs.parse({"query": "a\ud800b"}).query == "a\ufffdb"
    assert SearchArgs.parse({"query": "\U0001f600"}).query == "\U0001f600"
