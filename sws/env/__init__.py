"""The tool contract the model sees: the tools, their schemas, argument handling, observations and URLs.

A tool is one object, ``Tool(name, schema, Args, run)`` (:mod:`sws.env.tool`), in one module (the built-ins:
:mod:`sws.env.search_tool`, :mod:`sws.env.open_url_tool`, :mod:`sws.env.submit_tool`), made callable with
``register_tool`` (:mod:`sws.env.registry`). ``WikiTools(backend).call_tool(name, arguments_json)`` is the
single entry point for the agent loop and the service; it never raises. Everything the model or the score
sees follows CONTRACT.md part 2 bit for bit (§1.1, §1.6, §1.9, §2.1-§2.5, §3, §6.6). Deliberate deviations from the reference (CONTRACT.md part 1 §2):

- ``top_k`` is clamped to ``max_top_k`` (default 50); the reference forwards any positive value.
- ``only_title`` is a real boolean: ``"false"``, ``"0"``, ``"no"`` are false; a value that is not a boolean
  (e.g. ``"maybe"``, ``2``, a list) is an error observation. The reference used Python truthiness.
- An unknown ``method`` is an error observation; the reference silently searched with ``rrf``.
- A query over ``max_query_chars`` (default 4096) is an error observation; the reference embedded and
  searched queries of any length (100 kB queries cost seconds of tokenising on the vector path).
- Error observations name the real problem. The reference's tool server answered HTTP 4xx and the model
  saw httpx's generic ``HTTPStatusError`` text; here an empty query gives ``ValueError: query is empty``,
  arguments that are not a JSON object a ``TypeError`` (not ``AttributeError``), and a missing or null
  ``url`` ``ValueError: missing required argument 'url'`` (not ``KeyError: 'url'``, nor opening "None").
- Backend failures also become error observations (``call_tool`` never raises); ``sws.env.guard.call_tool``
  raises them for callers that treat them as fatal.
- The full-article view accepts an optional cap (``article_max_chars``), off by default (parity).
- The search description has a config option for the paper's "ranked hits" wording; the default is the
  repository's "markdown hits".
- The served ``/search``, ``/open_url`` and ``/random`` answer as the reference server (tool outcomes 200,
  its request models' rejections 422), except that a query over ``max_query_chars`` is 400, ``top_k`` is
  clamped, bodies over the bound are 413, a non-JSON content type 415, error bodies are sws's JSON and
  ``/random`` also answers GET (serve/README.md).

Tool errors (:mod:`sws.env.errors`) and the call guard the service and the in-process client share
(:mod:`sws.env.guard`: backend failures raised, not observed) live here too, below every client and the agent.

Page resolution (page id, exact title, redirect, case-insensitive title, then best BM25 title) belongs to the
backend: ``resolve_page`` receives the URL identifier percent-decoded and stripped, underscores as they are.
"""

from sws.env.arguments import (
    DEFAULT_MAX_TOP_K,
    DEFAULT_TOP_K,
    SEARCH_METHODS,
    coerce_bool,
    coerce_top_k,
    normalize_method,
    parse_arguments,
)
from sws.env.errors import BackendFailure, FatalToolError, ToolRequestError, TransientToolError
from sws.env.guard import call_tool, guarded
from sws.env.hits import NO_RESULTS, make_snippet, make_title_snippet, render_hits
from sws.env.observations import ERROR_HINT, error_observation
from sws.env.open_url_tool import OpenedUrl, OpenUrlArgs, open_page
from sws.env.registry import (
    TOOL_NAMES,
    get_tool,
    import_tool_modules,
    register_tool,
    registered_tools,
    schemas_of,
    tool_schemas,
    unregister_tool,
)
from sws.env.search_tool import SEARCH_DESCRIPTIONS, SearchArgs, render_search, search_hits
from sws.env.submit_tool import submit_observation
from sws.env.tool import DEFAULT_OPTIONS, Tool, ToolOptions, function_schema
from sws.env.tools import ToolCall, WikiTools
from sws.env.urls import INVALID_URL_MESSAGE, LINK_MODES, WikiUrl, chunk_url, parse_wiki_url
from sws.env.views import (
    chunk_not_found,
    clean_view_text,
    missing_document,
    no_document,
    render_article_view,
    render_chunk_view,
)

TOOL_SCHEMAS = tool_schemas()

__all__ = [
    "DEFAULT_MAX_TOP_K",
    "DEFAULT_OPTIONS",
    "DEFAULT_TOP_K",
    "ERROR_HINT",
    "INVALID_URL_MESSAGE",
    "LINK_MODES",
    "NO_RESULTS",
    "SEARCH_DESCRIPTIONS",
    "SEARCH_METHODS",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "BackendFailure",
    "FatalToolError",
    "OpenUrlArgs",
    "OpenedUrl",
    "SearchArgs",
    "Tool",
    "ToolCall",
    "ToolOptions",
    "ToolRequestError",
    "TransientToolError",
    "WikiTools",
    "WikiUrl",
    "call_tool",
    "chunk_not_found",
    "chunk_url",
    "clean_view_text",
    "coerce_bool",
    "coerce_top_k",
    "error_observation",
    "function_schema",
    "get_tool",
    "guarded",
    "import_tool_modules",
    "make_snippet",
    "make_title_snippet",
    "missing_document",
    "no_document",
    "normalize_method",
    "open_page",
    "parse_arguments",
    "parse_wiki_url",
    "register_tool",
    "registered_tools",
    "render_article_view",
    "render_chunk_view",
    "render_hits",
    "render_search",
    "schemas_of",
    "search_hits",
    "submit_observation",
    "tool_schemas",
    "unregister_tool",
]
