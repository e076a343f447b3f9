"""Tool-call arguments from the model -> validated values (CONTRACT.md part 1 over part 2 §1.2, §2.1, §3): the
JSON object and the coercions the tools' ``Args.parse`` share.

Every problem raises ``ValueError`` (the ``json`` parser's ``JSONDecodeError`` is one; a non-object is a
``TypeError``) with a message written for the model; the dispatcher turns it into the §6.6 error observation.
"""

from __future__ import annotations

import json
from typing import Any

from sws.types import SEARCH_METHODS

DEFAULT_TOP_K = 10
DEFAULT_MAX_TOP_K = 50
DEFAULT_MAX_QUERY_CHARS = 4096

_METHOD_ALIASES = {
    "vec": "vector",
    "vector": "vector",
    "kw": "keywords",
    "kws": "keywords",
    "keyword": "keywords",
    "keywords": "keywords",
    "rrf": "rrf",
    "mix": "rrf",
    "": "rrf",
}
_TRUE_WORDS = {"true", "1", "yes", "on"}
_FALSE_WORDS = {"false", "0", "no", "off", "", "null", "none"}
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def parse_arguments(arguments_json: str) -> dict[str, Any]:
    """Parse the model's arguments string as JSON; it must be an object."""
    args = json.loads(arguments_json)
    if not isinstance(args, dict):
        raise TypeError(f"tool arguments must be a JSON object, got {_JSON_TYPES.get(type(args), 'null')}")
    return args


def coerce_top_k(value: Any, max_top_k: int = DEFAULT_MAX_TOP_K) -> int:
    """``int(value)`` (floats truncate); unparseable or < 1 gives 10; above ``max_top_k`` clamps to it."""
    try:
        top_k = int(value)
    except (TypeError, ValueError, OverflowError):
        return DEFAULT_TOP_K
    if top_k < 1:
        return DEFAULT_TOP_K
    return min(top_k, max_top_k)


def coerce_bool(value: Any, name: str) -> bool:
    """A real boolean: JSON true/false/null, 0/1, or the words true/false, yes/no, on/off, 1/0 (any case)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise ValueError(f"{name} must be true or false, got {_preview(value)}")


def normalize_method(value: Any) -> str:
    """Case-insensitive method name with the reference aliases; anything else is an error, not rrf."""
    key = str(value or "").strip().lower()
    if key not in _METHOD_ALIASES:
        raise ValueError(f"Unknown search method {_preview(value)}: use one of {', '.join(SEARCH_METHODS)}")
    return _METHOD_ALIASES[key]


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (which JSON allows and UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _preview(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"
