"""A tool the model can call, as one object: ``Tool(name, schema, Args, run)`` (registered in
:mod:`sws.env.registry`), and the options every tool is parsed and run under."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sws.env.arguments import DEFAULT_MAX_QUERY_CHARS, DEFAULT_MAX_TOP_K
from sws.env.hits import SNIPPET_CHARS
from sws.env.urls import LINK_MODES


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """The tool contract's knobs (``WikiTools`` keyword arguments, the ``tools`` config section).

    Args:
        max_top_k: upper clamp for ``top_k`` (the reference has none).
        max_query_chars: longer queries are an error observation (the reference has no bound).
        link_mode: ``"wikiid"`` (default, ``.../wiki/<page_id>#chunk-N``) or ``"title"`` hit links.
        snippet_chars: snippet cut, 32..100000; the agent path of the reference always uses 1024.
        article_max_chars: optional cap on the full-article view; ``None`` (default) returns it whole.
        search_description: search schema wording, ``"markdown"`` (repository, default) or ``"ranked"`` (paper).
    """

    max_top_k: int = DEFAULT_MAX_TOP_K
    max_query_chars: int = DEFAULT_MAX_QUERY_CHARS
    link_mode: str = "wikiid"
    snippet_chars: int = SNIPPET_CHARS
    article_max_chars: int | None = None
    search_description: str = "markdown"

    def __post_init__(self) -> None:
        if self.max_top_k < 1:
            raise ValueError(f"max_top_k={self.max_top_k}: must be >= 1")
        if self.link_mode not in LINK_MODES:
            raise ValueError(f"link_mode={self.link_mode!r}: expected one of {list(LINK_MODES)}")
        if not 32 <= self.snippet_chars <= 100_000:
            raise ValueError(f"snippet_chars={self.snippet_chars}: must be within 32..100000")
        if self.article_max_chars is not None and self.article_max_chars < 1:
            raise ValueError(f"article_max_chars={self.article_max_chars}: must be >= 1 or None")


DEFAULT_OPTIONS = ToolOptions()


class ToolArgs(Protocol):
    """A tool's parsed arguments."""

    @classmethod
    def parse(cls, raw: dict[str, Any], options: ToolOptions) -> Any:
        """The model's JSON object as arguments; raises ``ValueError``/``TypeError`` with a message for it."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool the model can call.

    Args:
        name: what the model calls it.
        schema: ``schema(options)``: a fresh OpenAI function-tool schema (:func:`function_schema`).
        Args: ``Args.parse(raw, options)`` turns the model's JSON object into the arguments ``run`` takes;
            everything it raises is the model's mistake (the error observation).
        run: ``run(backend, args) -> observation``; everything it raises is the service's failure, not the
            model's (``sws.env.guard``).
        ends_episode: the call ends the agent's episode (``submit_answer``): the agent answers it itself with
            ``run(None, args)``, and MCP, whose clients end their own episodes, does not list it.
    """

    name: str
    schema: Callable[[ToolOptions], dict[str, Any]]
    Args: type[ToolArgs]
    run: Callable[[Any, Any], str]
    ends_episode: bool = False


def function_schema(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    """``{"type": "function", "function": {name, description, parameters}}`` with an object of ``properties``."""
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }
