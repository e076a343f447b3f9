"""The tool schemas, byte for byte against CONTRACT.md §1.1, §2.1 and §3."""

import json

import pytest

from sws.env import SEARCH_DESCRIPTIONS, TOOL_NAMES, TOOL_SCHEMAS, tool_schemas

SEARCH_JSON = (
    '{"type": "function", "function": {"name": "search", "description": "Search offline knowledge '
    'base and return markdown hits with URLs and one-line snippets. method=\\"rrf\\" gives hybrid '
    'recall/balance (default), method=\\"keywords\\" is lexical exact-match friendly, and '
    'method=\\"vector\\" is semantic similarity friendly.", "parameters": {"type": "object", '
    '"properties": {"query": {"type": "string", "description": "Search query."}, "top_k": {"type": '
    '"integer", "description": "Number of hits to return.", "default": 10, "minimum": 1}, '
    '"only_title": {"type": "boolean", "description": "Whether to only search article titles.", '
    '"default": false}, "method": {"type": "string", "description": "Search method: \\"rrf\\" '
    '(hybrid/balanced, recommended default), \\"keywords\\" (lexical exact-token matching), \\"vector\\" '
    '(semantic embedding similarity).", "enum": ["rrf", "keywords", "vector"], "default": "rrf"}}, '
    '"required": ["query"]}}}'
)
OPEN_URL_JSON = (
    '{"type": "function", "function": {"name": "open_url", "description": "Open a URL. If URL has '
    '#chunk-N suffix, returns that chunk; remove the #chunk-N suffix to fetch the full article.", '
    '"parameters": {"type": "object", "properties": {"url": {"type": "string", "description": "URL '
    'to open."}}, "required": ["url"]}}}'
)
SUBMIT_JSON = (
    '{"type": "function", "function": {"name": "submit_answer", "description": "Submit the final '
    "answer and end the episode: a short exact string, or one Markdown table when the question "
    'requires it.", "parameters": {"type": "object", "properties": {"answer": {"type": "string", '
    '"description": "Final answer only (short string or one Markdown table), no explanation."}}, '
    '"required": ["answer"]}}}'
)


def test_tool_schemas_are_byte_identical():
    assert json.dumps(TOOL_SCHEMAS) == f"[{SEARCH_JSON}, {OPEN_URL_JSON}, {SUBMIT_JSON}]"
    assert [s["function"]["name"] for s in TOOL_SCHEMAS] == list(TOOL_NAMES)


def test_paper_variant_changes_only_the_search_description():
    ranked = tool_schemas("ranked")
    assert ranked[0]["function"]["description"] == (
        "Search offline knowledge base and return ranked hits with URLs and one-line snippets. "
        'method="rrf" gives hybrid recall/balance (default), method="keywords" is lexical exact-match '
        'friendly, and method="vector" is semantic similarity friendly.'
    )
    assert json.dumps(ranked).replace("ranked hits", "markdown hits") == json.dumps(TOOL_SCHEMAS)
    assert set(SEARCH_DESCRIPTIONS) == {"markdown", "ranked"}


def test_each_call_returns_a_fresh_copy():
    schemas = tool_schemas()
    schemas[0]["function"]["name"] = "changed"
    assert tool_schemas()[0]["function"]["name"] == "search"


def test_unknown_variant_is_rejected():
    with pytest.raises(ValueError, match="'paper'"):
        tool_schemas("paper")
