"""End to end through ``WikiTools.call_tool``: what the model sees for each tool call."""

import json

import pytest

from sws.env import ERROR_HINT, INVALID_URL_MESSAGE, BackendFailure, WikiTools, call_tool, get_tool

EINSTEIN_LEAD = (  # the stored text of chunk 736_0 in conftest.py, before its filler
    "Section 0: Preamble\n"
    "Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist.\n"
    "He is best known for the theory of relativity.█ He also  contributed\tto quantum mechanics.\n"
    "\n"
)
EINSTEIN_SNIPPET = EINSTEIN_LEAD + "Relativity " * 74 + "Relativit... (Omitted 387 characters)"
EINSTEIN_TITLE_SNIPPET = (
    "Section 0: Preamble Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical "
    "physicist. "
    "He is best known for the theory of relativity. He also contributed to quantum mechanics. "
    + "Relativity " * 27
    + "Re"
)
EINSTEIN_CHUNK_2 = (
    "# Albert Einstein (chunk 2/3)\n"
    "\n"
    "## Section 1: Early life\n"
    "Einstein was born in Ulm.\n"
    "| Year | Event |\n"
    "|---|---|\n"
    "| 1879 | Born |\n"
    "## Section 1.1: Family\n"
    "### Section 2.1.3: Deep heading\n"
    "###### Section 1.2.3.4.5.6.7: Very deep\n"
    "## Section 3\n"
    "# Already a heading\n"
    "Section X: not a number\n"
    "Sectional view\n"
)


def call(tools: WikiTools, name: str, **arguments) -> str:
    return tools.call_tool(name, json.dumps(arguments))


def error(tool: str, arguments: str, error_type: str, message: str) -> str:
    return (
        f'{{"status": "error", "tool": "{tool}", "arguments": {json.dumps(arguments, ensure_ascii=False)}, '
        f'"error_type": "{error_type}", "error": {json.dumps(message, ensure_ascii=False)}, '
        f'"hint": "Fix tool arguments and call tool again. For search, provide non-empty \'query\'."}}'
    )


def test_search_golden(tools):
    assert call(tools, "search", query="Einstein", top_k=2, method="keywords") == (
        "1. [Albert Einstein](https://en.wikipedia.org/wiki/736#chunk-1)\n"
        f"   - {EINSTEIN_SNIPPET}\n"
        "\n"
        "2. [Einstein family](https://en.wikipedia.org/wiki/1234567#chunk-1)\n"
        "   - Section 0: Preamble\n"
        "The Einstein family is the family of Albert Einstein."
    )


def test_search_hits_of_one_page_and_untruncated_snippets(tools):
    assert call(tools, "search", query="Princeton Ulm") == (
        "1. [Albert Einstein](https://en.wikipedia.org/wiki/736#chunk-2)\n"
        "   - Section 1: Early life\n"
        "Einstein was born in Ulm.\n"
        "| Year | Event |\n"
        "|---|---|\n"
        "| | |\n"
        "| 1879 | Born |\n"
        "I\n"
        "  Section 1.1:   Family  \n"
        "Section 2.1.3: Deep heading\n"
        "Section 1.2.3.4.5.6.7: Very deep\n"
        "Section 3:\n"
        "# Already a heading\n"
        "Section X: not a number\n"
        "Sectional view\n"
        "====\n"  # snippets show the raw stored text
        "\n"
        "2. [Albert Einstein](https://en.wikipedia.org/wiki/736#chunk-3)\n"
        "   - Section 4: Later life\n"
        "He died in Princeton."
    )


def test_only_title_golden(tools, backend):
    assert call(tools, "search", query="einstein", only_title="true", method="vector") == (
        "1. [Albert Einstein](https://en.wikipedia.org/wiki/736#chunk-1)\n"
        f"   - {EINSTEIN_TITLE_SNIPPET}\n"
        "\n"
        "2. [Einstein family](https://en.wikipedia.org/wiki/1234567#chunk-1)\n"
        "   - Section 0: Preamble The Einstein family is the family of Albert Einstein."
    )
    assert backend.calls == [("search_titles", "einstein", 10)]


def test_only_title_false_string_searches_text(tools, backend):
    call(tools, "search", query="Ulm", only_title="false")
    assert backend.calls == [("search", "Ulm", 10, "rrf")]


def test_blank_snippet_and_no_results(tools):
    assert call(tools, "search", query="blank") == "1. [Blank page](https://en.wikipedia.org/wiki/7#chunk-1)"
    assert call(tools, "search", query="xyzzy") == "No results found."
    assert call(tools, "search", query="xyzzy", only_title=True) == "No results found."


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ({"query": " Ulm "}, ("search", "Ulm", 10, "rrf")),
        ({"query": "Ulm", "top_k": 0}, ("search", "Ulm", 10, "rrf")),
        ({"query": "Ulm", "top_k": -4, "method": "VEC"}, ("search", "Ulm", 10, "vector")),
        ({"query": "Ulm", "top_k": 10**9, "method": "kw"}, ("search", "Ulm", 50, "keywords")),
        ({"query": "Ulm", "top_k": "3", "method": "mix"}, ("search", "Ulm", 3, "rrf")),
        ({"query": "Ulm", "top_k": 2.9, "method": ""}, ("search", "Ulm", 2, "rrf")),
        ({"query": "Ulm", "top_k": None, "method": None}, ("search", "Ulm", 10, "rrf")),
    ],
)
def test_search_arguments_reach_the_backend(tools, backend, arguments, sent):
    tools.call_tool("search", json.dumps(arguments))
    assert backend.calls == [sent]


def test_max_top_k_is_configurable(backend):
    WikiTools(backend, max_top_k=200).call_tool("search", '{"query": "Ulm", "top_k": 1000}')
    assert backend.calls == [("search", "Ulm", 200, "rrf")]


def test_a_call_is_its_tools_args_and_run(tools, backend):
    search = get_tool("search")
    args = search.Args.parse({"query": "Princeton", "top_k": 1, "method": "kws"}, tools.options)
    assert search.run(backend, args) == call(tools, "search", query="Princeton", top_k=1, method="kws")
    assert backend.calls == [("search", "Princeton", 1, "keywords")] * 2
    with pytest.raises(ValueError, match="query is empty"):
        search.Args.parse({"query": "  "}, tools.options)


def test_title_link_mode_round_trip(backend):
    tools = WikiTools(backend, link_mode="title")
    assert call(tools, "search", query="programming", method="keywords") == (
        "1. [C++ (lang)/x](https://en.wikipedia.org/wiki/C%2B%2B_%28lang%29%2Fx#chunk-1)\n"
        "   - Section 0: Preamble\n"
        "C++ is a programming language."
    )
    assert call(tools, "open_url", url="https://en.wikipedia.org/wiki/C%2B%2B_%28lang%29%2Fx#chunk-1") == (
        "# C++ (lang)/x (chunk 1/1)\n\n## Section 0: Preamble\nC++ is a programming language.\n"
    )


def test_every_hit_url_opens_its_chunk(tools):
    for line in call(tools, "search", query="Einstein Princeton Ulm C programming novel", top_k=50).split(
        "\n"
    ):
        if line[:1].isdigit() and ". [" in line:
            title, url = line.split(". [", 1)[1].rstrip(")").split("](")
            assert call(tools, "open_url", url=url).startswith(f"# {title} (chunk ")


def test_open_chunk_golden(tools):
    assert call(tools, "open_url", url="https://en.wikipedia.org/wiki/736#chunk-2") == EINSTEIN_CHUNK_2
    assert call(tools, "open_url", url="/wiki/Albert_Einstein#chunk-02") == EINSTEIN_CHUNK_2
    assert call(tools, "open_url", url="https://en.wikipedia.org/wiki/736#chunk-3") == (
        "# Albert Einstein (chunk 3/3)\n\n## Section 4: Later life\nHe died in Princeton.\n"
    )


def test_open_article_golden(tools):
    article = call(tools, "open_url", url="https://en.wikipedia.org/wiki/Einstein")  # through the redirect
    assert article == (
        "# Albert Einstein (ID: 736)\n"
        "\n"
        "## Section 0: Preamble\n"
        + EINSTEIN_LEAD[len("Section 0: Preamble\n") :]
        + "Relativity " * 110
        + "\n\n"
        + EINSTEIN_CHUNK_2[len("# Albert Einstein (chunk 2/3)\n\n") :]
        + "\n"
        + "## Section 4: Later life\n"
        + "He died in Princeton."
    )
    for url in [
        "/wiki/736",
        "/wiki/736#chunk-0",
        "/wiki/736#History",
        "http://x.org/wiki/albert_einstein?a=b",
    ]:
        assert call(tools, "open_url", url=url) == article


def test_article_cap(backend):
    capped = call(WikiTools(backend, article_max_chars=40), "open_url", url="/wiki/1984")
    assert capped == "# Nineteen Eighty-Four (ID: 1984)\n\n## Se... (Omitted 43 characters)"


@pytest.mark.parametrize(
    ("url", "observation"),
    [
        ("https://en.wikipedia.org/wiki/736#chunk-4", "Chunk not found: 736#chunk-4"),
        ("/wiki/Albert_Einstein#chunk-99", "Chunk not found: Albert_Einstein#chunk-99"),
        ("/wiki/Xyzzy_plugh", "No document found for identifier: Xyzzy_plugh"),
        ("/wiki/Ghost_page#chunk-1", "Document with ID '999' not found."),
        ("https://en.wikipedia.org/w/index.php?title=Ulm", INVALID_URL_MESSAGE),
        ("wiki/736", INVALID_URL_MESSAGE),
        ("", INVALID_URL_MESSAGE),
    ],
)
def test_open_url_error_strings(tools, url, observation):
    assert call(tools, "open_url", url=url) == observation


def test_numeric_identifier_is_a_page_id_first(tools):
    assert call(tools, "open_url", url="/wiki/1984#chunk-1").startswith("# Nineteen Eighty-Four (chunk 1/1)")


@pytest.mark.parametrize(
    ("arguments", "observation"),
    [
        ('{"answer": "Ulm"}', '{"status": "done", "answer": "Ulm"}'),
        ('{"answer": "Zürich – 北京"}', '{"status": "done", "answer": "Zürich – 北京"}'),
        ('{"answer": "| a |\\n|---|"}', '{"status": "done", "answer": "| a |\\n|---|"}'),
        ('{"answer": ""}', '{"status": "done", "answer": ""}'),
        ('{"answer": null}', '{"status": "done", "answer": ""}'),
        ("{}", '{"status": "done", "answer": ""}'),
        ("", '{"status": "done", "answer": ""}'),
        ('{"answer": 1879}', '{"status": "done", "answer": "1879"}'),
        ('{"answer": 0}', '{"status": "done", "answer": ""}'),  # str(answer or ""), as the reference
    ],
)
def test_submit_answer(tools, arguments, observation):
    assert tools.call_tool("submit_answer", arguments) == observation


def test_error_observation_golden(tools):
    assert tools.call_tool("search", '{"query": ""}') == (
        '{"status": "error", "tool": "search", "arguments": "{\\"query\\": \\"\\"}", '
        '"error_type": "ValueError", '
        '"error": "query is empty", "hint": "Fix tool arguments and call tool again. For search, provide '
        "non-empty 'query'.\"}"
    )
    assert json.loads(tools.call_tool("search", "{}"))["hint"] == ERROR_HINT


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "search",
            "{bad",
            (
                "JSONDecodeError",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
        ),
        ("search", "[1, 2]", ("TypeError", "tool arguments must be a JSON object, got array")),
        (
            "search",
            '{"query": "x", "method": "bm25"}',
            ("ValueError", "Unknown search method 'bm25': use one of rrf, keywords, vector"),
        ),
        (
            "search",
            '{"query": "x", "only_title": "maybe"}',
            ("ValueError", "only_title must be true or false, got 'maybe'"),
        ),
        ("open_url", "{}", ("ValueError", "missing required argument 'url'")),
        ("open_url", '{"url": null}', ("ValueError", "missing required argument 'url'")),
        ("browse", '{"url": "x"}', ("ValueError", "Unknown tool: browse")),
        ("", "{}", ("ValueError", "Unknown tool: ")),
    ],
)
def test_error_observations(tools, name, arguments, expected):
    assert tools.call_tool(name, arguments) == error(name, arguments, *expected)


def test_tool_name_is_stripped_and_arguments_default(tools):
    assert tools.call_tool(" submit_answer\n", None) == '{"status": "done", "answer": ""}'
    assert tools.call_tool("search", None) == error("search", "{}", "ValueError", "query is empty")


class BrokenBackend:
    def search(self, query, top_k, method):
        raise RuntimeError("index shard 3 unreadable")


def test_backend_failures_become_observations_or_raise_from_the_guard():
    tools = WikiTools(BrokenBackend())
    arguments = '{"query": "Ulm"}'
    assert tools.call_tool("search", arguments) == error(
        "search", arguments, "RuntimeError", "index shard 3 unreadable"
    )
    with pytest.raises(BackendFailure, match="RuntimeError: index shard 3 unreadable") as raised:
        call_tool(tools, "search", arguments)
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert call_tool(tools, "search", '{"query": ""}') == tools.call_tool("search", '{"query": ""}')


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_top_k": 0}, "max_top_k=0"),
        ({"link_mode": "slug"}, "link_mode='slug'"),
        ({"snippet_chars": 31}, "snippet_chars=31"),
        ({"snippet_chars": 100_001}, "snippet_chars=100001"),
        ({"article_max_chars": 0}, "article_max_chars=0"),
        ({"search_description": "paper"}, "search_description='paper'"),
    ],
)
def test_bad_options_are_rejected(backend, options, message):
    with pytest.raises(ValueError, match=message):
        WikiTools(backend, **options)


def test_schemas_follow_the_option(backend):
    assert (
        "ranked hits" in WikiTools(backend, search_description="ranked").schemas[0]["function"]["description"]
    )
    assert "markdown hits" in WikiTools(backend).schemas[0]["function"]["description"]


def test_snippet_chars_option(backend):
    observation = call(WikiTools(backend, snippet_chars=40), "search", query="Nineteen", method="keywords")
    assert observation == (
        "1. [Nineteen Eighty-Four](https://en.wikipedia.org/wiki/1984#chunk-1)\n"
        "   - Section 0: Preamble\nA novel by George Or... (Omitted 5 characters)"
    )
