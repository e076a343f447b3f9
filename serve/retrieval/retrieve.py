"""The retriever formats RL trainers already call, over the same searchers as the tools.

    POST /retrieve  Search-R1 (Search-R1, veRL's ``SearchTool``), ASearcher:
                    {"queries": [str, ...], "topk": int | null, "return_scores": bool}
                    -> {"result": [[hit, ...] per query, in order]}
                    hit: {"document": doc, "score": float} with return_scores, else the bare doc
                    SkyRL-gym, rLLM: {"query": str, "topk" | "top_k": int, "return_scores": bool}
                    -> {"result": [[hit, ...]]} (SkyRL's own server's answer: one list) and, for rLLM,
                       "query", "method", "results": [{"id", "content": doc, "document": doc, "score"}],
                       "num_results" (rLLM's own server's fields; its tool reads content.contents)
    POST /access    ASearcher: {"urls": [str, ...]} -> {"result": [{"contents": str} | null per url]}

``doc`` is ``{"id": chunk id, "contents": '"<Title>"\\n<chunk text>', "url": the chunk's offline-stable URL}``:
the title in double quotes on the first line, as clients split it; the text cut at ``max_chars`` like a
search snippet (``... (Omitted N characters)``; the server's default, ``serve.retrieve.max_chars``, keeps 3 hits
within Search-R1's 500-token observation). Options on either form: ``method`` (rrf | keywords | vector),
``max_chars``, ``only_title``. ``topk`` (or ``top_k``) missing or null is :data:`DEFAULT_TOPK`, Search-R1's.

One bad query costs only itself: a query that is not a string or is longer than the tools' bound is answered
with no hits, and the answer's ``errors`` lists it (``{"index", "code", "message"}``; the trainers read only
``result`` / ``results``). A body that can never succeed (wrong types elsewhere, ``topk`` out of bounds, more
than ``serve.retrieve.max_queries`` queries, an answer over ``serve.retrieve.max_answer_chars``) is 422, which
the trainers do not retry; the rest of the errors are the service's (503 with ``Retry-After``, 504), which
they retry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr, model_validator

from sws.config import RetrieveSettings
from sws.env import SEARCH_METHODS, ToolOptions, chunk_url
from sws.env.arguments import valid_text
from sws.env.hits import make_snippet
from sws.types import Hit

DEFAULT_TOPK = 3  # Search-R1's retriever default
DOCUMENT_FRAMING = (
    256  # a document's characters besides its text (id, title, url, keys), for the answer bound
)


class RetrieveRequest(BaseModel):
    """A ``/retrieve`` body in either form: ``queries`` (Search-R1, a batch) or ``query`` (SkyRL, rLLM: one).
    The queries' own types are checked one by one (:meth:`plan`), so that one bad query costs only itself."""

    queries: list[Any] | None = None
    query: Any = None
    topk: StrictInt | None = Field(default=None, ge=1)
    top_k: StrictInt | None = Field(default=None, ge=1)
    return_scores: StrictBool = False
    method: Literal[SEARCH_METHODS] = "rrf"  # type: ignore[valid-type]
    max_chars: StrictInt | None = Field(default=None, ge=32, le=100_000)  # None: the server's
    only_title: StrictBool = False

    @model_validator(mode="after")
    def _one_form(self) -> RetrieveRequest:
        if (self.queries is None) == ("query" not in self.model_fields_set):
            raise ValueError("send either 'queries' (a list of strings) or 'query' (a string)")
        if self.topk is not None and self.top_k is not None and self.topk != self.top_k:
            raise ValueError("'topk' and 'top_k' disagree")
        return self

    @property
    def batched(self) -> bool:
        return self.queries is not None

    def plan(self, options: ToolOptions, settings: RetrieveSettings) -> RetrievePlan:
        """What to search, checked against the bounds.

        Raises:
            ValueError: the request can never succeed (too many queries, ``topk`` above the bound, an
                answer over ``settings.max_answer_chars``).
        """
        sent = self.queries if self.queries is not None else [self.query]
        if len(sent) > settings.max_queries:
            raise ValueError(
                f"{len(sent)} queries in one request; at most {settings.max_queries} "
                "(serve.retrieve.max_queries): split the batch"
            )
        k = self.topk or self.top_k or DEFAULT_TOPK
        if k > options.max_top_k:
            raise ValueError(f"topk={k} is above the bound {options.max_top_k}")
        max_chars = self.max_chars or settings.max_chars
        answer = len(sent) * k * (max_chars + DOCUMENT_FRAMING)
        if answer > settings.max_answer_chars:
            raise ValueError(
                f"the answer could reach {answer:,} characters ({len(sent)} queries x topk {k} x max_chars "
                f"{max_chars} + {DOCUMENT_FRAMING}), above the bound of {settings.max_answer_chars:,} "
                "(serve.retrieve.max_answer_chars): send fewer queries, a smaller topk or max_chars"
            )
        texts: list[str | None] = []
        errors: list[dict[str, Any]] = []
        for i, query in enumerate(sent):
            text, error = _checked_query(query, options.max_query_chars)
            texts.append(text)
            if error is not None:
                errors.append({"index": i, **error})
        return RetrievePlan(self, texts, errors, k, max_chars)


def _checked_query(query: Any, max_chars: int) -> tuple[str | None, dict[str, str] | None]:
    """The query stripped, lone surrogates replaced (as the tools do), or None and why not."""
    if not isinstance(query, str):
        return None, {
            "code": "invalid_query",
            "message": f"a query must be a string, not {type(query).__name__}",
        }
    text = valid_text(query).strip()
    if len(text) > max_chars:
        return None, {
            "code": "query_too_long",
            "message": f"the query is too long ({len(text)} characters; at most {max_chars})",
        }
    return text, None


@dataclass
class RetrievePlan:
    """A checked ``/retrieve`` request: ``texts`` to search (None: a bad query, answered with no hits and
    listed in ``errors``), ``k`` hits each, documents cut at ``max_chars``."""

    request: RetrieveRequest
    texts: list[str | None]
    errors: list[dict[str, Any]]
    k: int
    max_chars: int
    search_failures: dict[str, str] = field(
        default_factory=dict
    )  # query -> why the index could not search it

    def failed(self, failures: list[tuple[str, Exception]]) -> None:
        """Record queries the index could not search: each is answered with no hits and listed in ``errors``."""
        self.search_failures.update((query, str(exc)) for query, exc in failures)

    @property
    def asked(self) -> list[str]:
        """The texts to search, in order (the bad ones left out)."""
        return [text for text in self.texts if text is not None]

    def response(self, found: list[list[Hit]]) -> dict[str, Any]:
        """The answer in the request's own form (``found``: the hits of :attr:`asked`, best first)."""
        hits = iter(found)
        per_query = [next(hits) if text is not None else [] for text in self.texts]
        scored = self.request.return_scores
        result = [[self._hit(h, scored) for h in q] for q in per_query]
        answer: dict[str, Any] = {"result": result}
        if not self.request.batched:
            (hits_of_one,) = per_query
            answer |= {
                "query": self.texts[0],
                "method": self.request.method,
                "results": [self._result(h) for h in hits_of_one],
                "num_results": len(hits_of_one),
            }
        errors = self.errors + [
            {"index": i, "code": "search_failed", "message": self.search_failures[text]}
            for i, text in enumerate(self.texts)
            if text in self.search_failures
        ]
        if errors:
            answer["errors"] = sorted(errors, key=lambda error: error["index"])
        return answer

    def _hit(self, hit: Hit, scored: bool) -> dict[str, Any]:
        doc = document(hit, self.max_chars)
        return {"document": doc, "score": hit.score} if scored else doc

    def _result(self, hit: Hit) -> dict[str, Any]:
        """rLLM's result as its own server gives it (``content``: the document, whose ``contents`` its tool
        reads), with ``document`` too for its older tool."""
        doc = document(hit, self.max_chars)
        return {"id": doc["id"], "content": doc, "document": doc, "score": hit.score}


class AccessRequest(BaseModel):
    urls: list[StrictStr]


def article_url(url: str) -> str:
    """``url`` as the article it names, for ``/access``: ASearcher reads whole pages, so a ``#chunk-N`` (the
    URLs ``/retrieve`` gives) or any other fragment is dropped, and its own server's URL forms
    (``/w/index.php?title=T``, ``/index.php/T``, ``/index.php?title=T``) become ``/wiki/T``."""
    parsed = urlsplit(url.strip())
    title = parse_qs(parsed.query).get("title", [""])[0] if parsed.path.endswith("/index.php") else ""
    path = parsed.path
    if title:
        path = "/wiki/" + quote(title, safe="")
    elif "/index.php/" in path:
        path = "/wiki/" + path.split("/index.php/", 1)[1]
    return urlunsplit((parsed.scheme, parsed.netloc, path, "" if title else parsed.query, ""))


def document(hit: Hit, max_chars: int) -> dict[str, Any]:
    """The hit as the trainers' document."""
    chunk = hit.chunk
    return {
        "id": chunk.chunk_id,
        "contents": f'"{chunk.title}"\n{make_snippet(chunk.text, max_chars)}',
        "url": chunk_url(chunk.page_id, chunk.chunk_index),
    }


def query_batches(texts: list[str], size: int) -> list[list[str]]:
    """``texts`` in consecutive batches of at most ``size``."""
    return [texts[i : i + size] for i in range(0, len(texts), size)]
