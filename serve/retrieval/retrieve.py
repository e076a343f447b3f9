"""The retriever formats RL trainers already call, over the same searchers as the tools.

    POST /retrieve  Search-R1 (Search-R1, veRL's ``SearchTool``, SkyRL-gym's search env), ASearcher:
                    {"queries": [str, ...], "topk": int | null, "return_scores": bool}
                    -> {"result": [[hit, ...] per query, in order]}
                    hit: {"document": doc, "score": float} with return_scores, else the bare doc
                    rLLM: {"query": str, "top_k": int}
                    -> {"query", "method", "results": [{"document": doc, "score": float}], "num_results"}
    POST /access    ASearcher: {"urls": [str, ...]} -> {"result": [{"contents": str} | null per url]}

``doc`` is ``{"id": chunk id, "contents": '"<Title>"\\n<chunk text>', "url": the chunk's offline-stable URL}``:
the title in double quotes on the first line, as clients split it; the text cut at ``max_chars`` like a
search snippet (``... (Omitted N characters)``: a chunk is ~1536 tokens, ten times a wiki-18 passage, and
would swamp a trainer's response budget). Options on either form, bounded like ``/search``: ``method``
(rrf | keywords | vector), ``max_chars``, ``only_title``. ``topk`` (or ``top_k``) missing or null is
:data:`DEFAULT_TOPK`, Search-R1's; a whitespace-only query finds nothing. A body that can never succeed
(wrong types, ``topk`` out of bounds, too many or over-long queries) is 422; the rest of the errors are the
service's (503 with ``Retry-After``, 504), which trainers' retry loops retry.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr, model_validator

from sws.env import SEARCH_METHODS, ToolOptions, chunk_url
from sws.env.arguments import valid_text
from sws.env.hits import SNIPPET_CHARS, make_snippet
from sws.types import Hit

DEFAULT_TOPK = 3  # Search-R1's retriever default
MAX_QUERIES = 1024  # per request: a rollout batch


class RetrieveRequest(BaseModel):
    """A ``/retrieve`` body in either form: ``queries`` (Search-R1, a batch) or ``query`` (rLLM, one)."""

    queries: list[StrictStr] | None = Field(default=None, max_length=MAX_QUERIES)
    query: StrictStr | None = None
    topk: StrictInt | None = Field(default=None, ge=1)
    top_k: StrictInt | None = Field(default=None, ge=1)
    return_scores: StrictBool = False
    method: Literal[SEARCH_METHODS] = "rrf"  # type: ignore[valid-type]
    max_chars: StrictInt = Field(default=SNIPPET_CHARS, ge=32, le=100_000)
    only_title: StrictBool = False

    @model_validator(mode="after")
    def _one_form(self) -> RetrieveRequest:
        if (self.queries is None) == (self.query is None):
            raise ValueError("send either 'queries' (a list of strings) or 'query' (a string)")
        if self.topk is not None and self.top_k is not None and self.topk != self.top_k:
            raise ValueError("'topk' and 'top_k' disagree")
        return self

    @property
    def batched(self) -> bool:
        return self.queries is not None

    def texts(self, options: ToolOptions) -> list[str]:
        """The queries, stripped, lone surrogates replaced (as the tools do).

        Raises:
            ValueError: one is longer than the tools' bound.
        """
        sent = self.queries if self.queries is not None else [self.query or ""]
        texts = [valid_text(query).strip() for query in sent]
        for i, text in enumerate(texts):
            if len(text) > options.max_query_chars:
                raise ValueError(
                    f"queries[{i}] is too long ({len(text)} characters; at most {options.max_query_chars})"
                )
        return texts

    def k(self, options: ToolOptions) -> int:
        """Hits per query.

        Raises:
            ValueError: above the tools' ``max_top_k``.
        """
        k = self.topk or self.top_k or DEFAULT_TOPK
        if k > options.max_top_k:
            raise ValueError(f"topk={k} is above the bound {options.max_top_k}")
        return k


class AccessRequest(BaseModel):
    urls: list[StrictStr] = Field(max_length=MAX_QUERIES)


def document(hit: Hit, max_chars: int) -> dict[str, Any]:
    """The hit as the trainers' document."""
    chunk = hit.chunk
    return {
        "id": chunk.chunk_id,
        "contents": f'"{chunk.title}"\n{make_snippet(chunk.text, max_chars)}',
        "url": chunk_url(chunk.page_id, chunk.chunk_index),
    }


def retrieve_response(request: RetrieveRequest, texts: list[str], hits: list[list[Hit]]) -> dict[str, Any]:
    """The answer in the request's own form (``hits``: per text, best first)."""
    if not request.batched:
        results = [{"document": document(h, request.max_chars), "score": h.score} for h in hits[0]]
        return {"query": texts[0], "method": request.method, "results": results, "num_results": len(results)}
    if request.return_scores:
        return {
            "result": [
                [{"document": document(h, request.max_chars), "score": h.score} for h in q] for q in hits
            ]
        }
    return {"result": [[document(h, request.max_chars) for h in q] for q in hits]}
