"""The three OpenAI function-tool schemas the model sees (CONTRACT.md §1.1, §2.1, §3), byte for byte."""

from __future__ import annotations

from typing import Any

_SEARCH_DESCRIPTION = (
    "Search offline knowledge base and return {hits} hits with URLs and one-line snippets. "
    'method="rrf" gives hybrid recall/balance (default), method="keywords" is lexical exact-match friendly, '
    'and method="vector" is semantic similarity friendly.'
)

SEARCH_DESCRIPTIONS: dict[str, str] = {
    "markdown": _SEARCH_DESCRIPTION.format(hits="markdown"),  # the repository (default): it made the numbers
    "ranked": _SEARCH_DESCRIPTION.format(hits="ranked"),  # the paper's printed text
}

TOOL_NAMES = ("search", "open_url", "submit_answer")


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def tool_schemas(search_description: str = "markdown") -> list[dict[str, Any]]:
    """A fresh ``[search, open_url, submit_answer]`` list; ``search_description`` keys SEARCH_DESCRIPTIONS."""
    if search_description not in SEARCH_DESCRIPTIONS:
        raise ValueError(
            f"search_description={search_description!r}: expected one of {list(SEARCH_DESCRIPTIONS)}"
        )
    search = _function(
        "search",
        SEARCH_DESCRIPTIONS[search_description],
        {
            "query": {"type": "string", "description": "Search query."},
            "top_k": {
                "type": "integer",
                "description": "Number of hits to return.",
                "default": 10,
                "minimum": 1,
            },
            "only_title": {
                "type": "boolean",
                "description": "Whether to only search article titles.",
                "default": False,
            },
            "method": {
                "type": "string",
                "description": (
                    'Search method: "rrf" (hybrid/balanced, recommended default), '
                    '"keywords" (lexical exact-token matching), "vector" (semantic embedding similarity).'
                ),
                "enum": ["rrf", "keywords", "vector"],
                "default": "rrf",
            },
        },
        ["query"],
    )
    open_url = _function(
        "open_url",
        "Open a URL. If URL has #chunk-N suffix, returns that chunk; "
        "remove the #chunk-N suffix to fetch the full article.",
        {"url": {"type": "string", "description": "URL to open."}},
        ["url"],
    )
    submit_answer = _function(
        "submit_answer",
        "Submit the final answer and end the episode: a short exact string, "
        "or one Markdown table when the question requires it.",
        {
            "answer": {
                "type": "string",
                "description": "Final answer only (short string or one Markdown table), no explanation.",
            }
        },
        ["answer"],
    )
    return [search, open_url, submit_answer]


TOOL_SCHEMAS: list[dict[str, Any]] = tool_schemas()
