"""Request bodies of ``/search``, ``/open_url`` and ``/random``, validated as the reference server does.

The reference (CONTRACT §1.3, §2.1, §2.6, §9.3) declares its bodies as pydantic models, and FastAPI
answers 422 for any body they reject; so do these, with the same fields, defaults, bounds and lax coercions
(``"5"`` is a valid ``top_k``, ``"yes"`` a valid ``only_title``; ``5.5``, a number as ``url``, an alias
such as ``"kw"`` as ``method`` are not). Unknown keys are ignored, as there. The tool layer's own policy
(``top_k`` clamp, query length, empty query) applies to the validated values (``SearchRequest.args``), so a
body is validated once.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from sws.env import LINK_MODES, SEARCH_METHODS, SearchArgs, ToolOptions, coerce_top_k
from sws.env.hits import SNIPPET_CHARS
from sws.env.search_tool import checked_query

Model = TypeVar("Model", bound=BaseModel)


class SearchRequest(BaseModel):
    query: str
    top_k: int = Field(default=10, ge=1)
    only_title: bool = False
    method: Literal[SEARCH_METHODS] = "rrf"  # type: ignore[valid-type]
    max_chars_per_result: int = Field(default=SNIPPET_CHARS, ge=32, le=100_000)  # when absent: the server's
    link_mode: Literal[LINK_MODES] | None = None  # type: ignore[valid-type]  # None: the server's

    def args(self, options: ToolOptions) -> SearchArgs:
        """The search tool's arguments: the tools' policy on these typed values (``ValueError`` for an empty
        or over-long query), the fields the request set over the ``options``."""
        sent = "max_chars_per_result" in self.model_fields_set
        return SearchArgs(
            query=checked_query(self.query, options.max_query_chars),
            top_k=coerce_top_k(self.top_k, options.max_top_k),
            only_title=self.only_title,
            method=self.method,
            snippet_chars=self.max_chars_per_result if sent else options.snippet_chars,
            link_mode=self.link_mode or options.link_mode,
        )


class OpenUrlRequest(BaseModel):
    url: str


class RandomRequest(BaseModel):
    mode: Literal["chunk", "page"] = "chunk"
    seed: int | None = None


class RequestError(ValueError):
    """The body does not fit the endpoint's model; the message names each field and problem."""


def validated(model: type[Model], data: Any) -> Model:
    """``data`` (a decoded JSON body) as ``model``, else :class:`RequestError` with a one-line message."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = (
            f"{'.'.join(map(str, error['loc'])) or 'body'}: {error['msg']}"
            for error in exc.errors(include_url=False, include_input=False)
        )
        raise RequestError("; ".join(problems)) from None
