"""The retrieval service without Ray: tools over an opened index, bounds, typed errors, dispatch.

The HTTP app (``http_app.py``), the MCP endpoint (``mcp_endpoint.py``) and the deployment's handle methods
(``app.py``) all call it, so they answer the same text; tests drive it directly too.

Dispatch: Tantivy and FAISS calls take well under a millisecond here and hold the GIL for most of it, so
they run inline on the event loop (a thread pool of 32 cost a third of the throughput in GIL switching,
``benchmarks/serve_http.py``). A query embedding is the one slow step: with a :class:`QueryPrefetcher`
(the batched embedding deployment) it is awaited on the loop first and passed to the engine as the query's
vector (``SearchEngine.search(..., vector=)``), which then runs inline too; with an in-process embedder, vector and RRF searches go to a small thread pool.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from serve.retrieval.request_models import (
    OpenUrlRequest,
    RandomRequest,
    RequestError,
    SearchRequest,
    validated,
)
from serve.retrieval.retrieve import AccessRequest, RetrievePlan, RetrieveRequest, article_url, query_batches
from sws.config import RetrieveSettings
from sws.env import (
    NO_RESULTS,
    BackendFailure,
    OpenUrlArgs,
    SearchArgs,
    ToolCall,
    WikiTools,
    call_tool,
    chunk_url,
    guarded,
    open_page,
    render_search,
    search_hits,
)
from sws.env.urls import WIKI_BASE_URL
from sws.index.embedders.base import format_query
from sws.types import Hit


@dataclass(frozen=True)
class Limits:
    """Request bounds (the reference had none, CONTRACT §11 item 6); ``top_k`` and the query length are
    bounded by the tools themselves (``WikiTools(max_top_k=, max_query_chars=)``), the same in-process."""

    max_body_bytes: int = 65_536
    request_timeout_s: float = 60.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"{name}={value}: must be > 0")


class ServiceError(Exception):
    """A request the service answers with a non-200 status and a JSON error body.

    Tool-level outcomes (no such page or chunk, an invalid URL, no results) are not errors: 200 with the
    observation, as the reference server answers them.

    Args:
        status: HTTP status (400 bad request, 415 not JSON, 422 a body that does not fit the endpoint's
            request model).
        code: a stable machine-readable code, e.g. ``invalid_argument``.
        message: for humans (and models).
    """

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def body(self) -> dict[str, Any]:
        return {"error": {"status": self.status, "code": self.code, "message": self.message}}


class Overloaded(ServiceError):
    """503 with ``Retry-After``: a bounded queue on the request's way (the query embedder's) is full. Not a
    failure of the index: ``/health`` stays ok."""

    def __init__(self, message: str):
        super().__init__(503, "overloaded", message)


def _hit_record(rank: int, hit: Hit, link_mode: str) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "rank": rank,
        "title": chunk.title,
        "url": chunk_url(chunk.page_id, chunk.chunk_index, chunk.title, link_mode),
        "page_id": chunk.page_id,
        "chunk_id": chunk.chunk_id,
        "chunk_index": chunk.chunk_index,
        "n_chunks": chunk.n_chunks,
        "score": hit.score,
        "source": hit.source,
        "text_rank": hit.text_rank,
        "vector_rank": hit.vector_rank,
    }


class QueryPrefetcher(Protocol):
    """An embedder that computes a query vector asynchronously, for the engine to search with."""

    query_task: str

    async def aembed(self, text: str) -> Any:
        """The vector of ``text`` (the instruction already applied)."""

    async def aembed_batch(self, texts: list[str]) -> Any:
        """The rows of ``texts``, one forward pass (a ``/retrieve`` batch)."""


class _GivenVector:
    """The engine, with one query's embedding given: a tool's search of that query uses it, embedding nothing."""

    def __init__(self, engine: Any, query: str, vector: Any):
        self._engine, self._query, self._vector = engine, query, vector

    def search(self, query: str, top_k: int, method: str, vector: Any = None) -> list[Hit]:
        if vector is None and query == self._query:
            vector = self._vector
        return self._engine.search(query, top_k, method, vector)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


class RetrievalService:
    """Tool calls, structured search/open and service info over one search engine.

    Args:
        engine: the search backend (``sws.search.SearchEngine``).
        tool_options: ``WikiTools`` keyword arguments.
        limits: request bounds.
        info: static facts for ``info()`` (index manifest summary, versions, settings).
        prefetch: the engine's query embedder when it is remote (see the module docstring), else None.
        threads: worker threads for searches that embed in-process.
        failure_window_s: :meth:`health` is not ok for this long after a backend failure.
        retrieve: the bounds and batching of ``/retrieve`` and ``/access``.
    """

    def __init__(
        self,
        engine: Any,
        *,
        tool_options: dict[str, Any] | None = None,
        limits: Limits | None = None,
        info: dict[str, Any] | None = None,
        prefetch: QueryPrefetcher | None = None,
        threads: int = 4,
        failure_window_s: float = 60.0,
        retrieve: RetrieveSettings | None = None,
    ):
        self.engine = engine
        self.tools = WikiTools(engine, **(tool_options or {}))
        self.limits = limits or Limits()
        self.retrieve = retrieve or RetrieveSettings()
        self.prefetch = prefetch
        self.failure_window_s = failure_window_s
        self._last_failure: tuple[float, str] | None = None  # (time.monotonic(), message)
        self._info = info or {}
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sws-retrieval")

    @property
    def batch_body_bytes(self) -> int:
        """The body bound of ``/retrieve`` and ``/access``: ``retrieve.max_queries`` queries of the tools'
        longest, with their JSON quoting."""
        return self.retrieve.max_queries * (self.tools.options.max_query_chars + 16) + 4096

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """Every registered tool's schema (``/tools``)."""
        return self.tools.registered_schemas

    # ---- blocking calls ------------------------------------------------------------------------------------

    def call(self, name: str, arguments_json: str | None) -> str:
        """The observation, exactly as ``WikiTools.call_tool`` gives it, except that a backend failure
        raises ``BackendFailure``."""
        return call_tool(self.tools, name, arguments_json)

    def _call(self, backend: Any, call: ToolCall) -> str:
        return guarded(call.run, backend)

    def _search(self, backend: Any, args: SearchArgs) -> dict[str, Any]:
        """The ``search`` observation plus the hits as records, for programs (``POST /search``)."""
        hits = guarded(search_hits, backend, args)
        return {
            "content": render_search(args, hits),
            "query": args.query,
            "top_k": args.top_k,
            "method": args.method,
            "only_title": args.only_title,
            "hits": [_hit_record(i, hit, args.link_mode) for i, hit in enumerate(hits, 1)],
        }

    def _random(self, backend: Any, request: RandomRequest) -> dict[str, Any]:
        """A random chunk view or article view (``/random``, CONTRACT §2.6): the page drawn uniformly, the
        chunk uniformly within it; the same ``seed``, the same answer; no seed, a fresh draw."""
        rng = random.Random(request.seed)
        page_id = guarded(backend.random_page, rng)
        n_chunks = len(guarded(backend.page_chunks, page_id)) if page_id is not None else 0
        if not n_chunks:
            return {"content": NO_RESULTS, "mode": request.mode, "seed": request.seed, "url": None}
        if request.mode == "chunk":
            url = chunk_url(page_id, rng.randrange(n_chunks))
        else:
            url = f"{WIKI_BASE_URL}{page_id}"
        return {**self._opened(backend, url), "mode": request.mode, "seed": request.seed}

    def _opened(self, backend: Any, url: str) -> dict[str, Any]:
        """The ``open_url`` observation plus what it showed: every outcome of the tool (found, an invalid URL,
        no such page or chunk) is an answer, as in the reference."""
        args = OpenUrlArgs(url, self.tools.options.article_max_chars)
        opened = guarded(open_page, backend, args)
        return {
            "content": opened.content,
            "outcome": opened.outcome,
            "url": url,
            "page_id": opened.page_id,
            "title": opened.chunks[0].title if opened.chunks else None,
            "chunk": opened.target.chunk if opened.target else None,
            "n_chunks": len(opened.chunks),
        }

    def info(self) -> dict[str, Any]:
        return {**self._info, "pid": os.getpid()}

    def health(self) -> dict[str, Any]:
        """``{"status": "ok"}``, or ``"failing"`` with the error while a backend failure is recent."""
        if self._last_failure is not None:
            ago = time.monotonic() - self._last_failure[0]
            if ago < self.failure_window_s:
                return {"status": "failing", "error": self._last_failure[1], "failed_s_ago": round(ago, 3)}
        return {"status": "ok"}

    # ---- async entry points ------------------------------------------------------------------------------

    async def acall(self, name: str, arguments_json: str | None) -> str:
        """:meth:`call` for the event loop."""
        call = self.tools.parse(name, arguments_json)
        if isinstance(call, str):
            return call
        return await self._dispatch(_embedded_query(call.args), self._call, call)

    async def asearch(self, arguments: Any) -> dict[str, Any]:
        """``POST /search``: the ``search`` observation plus the hits as records.

        Raises:
            ServiceError: 422 for a body the reference's request model rejects, 400 for an empty or
                over-long query.
        """
        try:
            args = _request(SearchRequest, arguments).args(self.tools.options)
        except ValueError as exc:
            raise ServiceError(400, "invalid_argument", str(exc)) from exc
        return await self._dispatch(_embedded_query(args), self._search, args)

    async def aretrieve(self, arguments: Any) -> dict[str, Any]:
        """``POST /retrieve``, the RL trainers' formats (``serve.retrieval.retrieve``): the request's queries in
        batches of ``retrieve.batch_queries``, each embedded in one pass and searched as one batch on the pool,
        ``retrieve.parallel_batches`` at once; the answer built on the pool too, all within the deadline.
        Cancelled (the client gone, the deadline passed), it starts no further batch.

        Raises:
            ServiceError: 422 for a body that can never succeed.
            BackendFailure: the index or embedder failed (503).
            TimeoutError: past the request deadline (504).
        """
        request = _request(RetrieveRequest, arguments)
        try:
            plan = request.plan(self.tools.options, self.retrieve)
        except ValueError as exc:
            raise ServiceError(422, "invalid_request", str(exc)) from exc
        return await self._recorded(self._deadline(self._retrieved(plan), "retrieval"))

    async def _retrieved(self, plan: RetrievePlan) -> dict[str, Any]:
        lanes = asyncio.Semaphore(self.retrieve.parallel_batches)

        async def batch(queries: list[str]) -> list[list[Hit]]:
            async with lanes:
                return await self._batch_hits(plan, queries)

        batches = query_batches(plan.asked, self.retrieve.batch_queries)
        found = await asyncio.gather(*(batch(queries) for queries in batches))
        return await self._pooled(plan.response, [hits for part in found for hits in part])

    async def aaccess(self, arguments: Any) -> dict[str, Any]:
        """``POST /access`` (ASearcher): each URL's whole article (ASearcher reads pages: a chunk URL opens its
        page; its own server's URL forms are read, ``retrieve.article_url``), null for one that opens
        nothing; on the pool, within the request deadline."""
        urls = _request(AccessRequest, arguments).urls
        if len(urls) > self.retrieve.max_queries:
            raise ServiceError(
                422, "invalid_request", f"{len(urls)} urls; at most {self.retrieve.max_queries} per request"
            )
        backend = self.tools.backend
        work = self._pooled(lambda: [self._opened(backend, article_url(url)) for url in urls])
        opened = await self._recorded(self._deadline(work, "access"))
        return {"result": [{"contents": o["content"]} if o["outcome"] == "found" else None for o in opened]}

    async def aopen_url(self, arguments: Any) -> dict[str, Any]:
        """``POST /open_url`` (see :meth:`_opened`).

        Raises:
            ServiceError: 422 when ``url`` is missing or not a string.
        """
        return await self._dispatch(None, self._opened, _request(OpenUrlRequest, arguments).url)

    async def arandom(self, arguments: Any) -> dict[str, Any]:
        """``/random`` (see :meth:`_random`)."""
        return await self._dispatch(None, self._random, _request(RandomRequest, arguments))

    async def _dispatch(self, query: str | None, method: Any, *args: Any) -> Any:
        """Run ``method(backend, *args)`` (see :meth:`_run`); a backend failure is remembered for :meth:`health`.

        Raises:
            ServiceError: the request is wrong (400/422).
            BackendFailure: the index or embedder failed (HTTP 503; handle callers retry).
            TimeoutError: the embedding or pooled call ran out of time (HTTP 504).
        """
        return await self._recorded(self._run(query, method, *args))

    async def _recorded(self, work: Any) -> Any:
        """``await work``; a backend failure is remembered for :meth:`health`."""
        try:
            return await work
        except BackendFailure as exc:
            self._last_failure = (time.monotonic(), str(exc))
            raise

    async def _batch_hits(self, plan: RetrievePlan, queries: list[str]) -> list[list[Hit]]:
        """The hits of ``queries`` as one batch: their embeddings in one request, then one batched search on
        the pool (an in-process embedder embeds the batch there, in one forward pass). If the batch fails,
        each query is searched alone, so that a query the index cannot take costs only itself (no hits, listed
        in the plan's errors); if every one fails, the index is at fault (``BackendFailure``)."""
        engine, request = self.tools.backend, plan.request
        if request.only_title:
            return await self._pooled(guarded, engine.batch_search_titles, queries, plan.k)
        vectors = None
        if request.method != "keywords" and self.prefetch is not None:
            vectors = np.asarray(await self._embedded(queries), dtype=np.float32)
        try:
            return await self._pooled(guarded, engine.batch_search, queries, plan.k, request.method, vectors)
        except BackendFailure:
            if len(queries) == 1:
                raise
        alone = [None if vectors is None else vectors[i : i + 1] for i in range(len(queries))]
        return await self._pooled(self._searched_alone, plan, queries, alone)

    def _searched_alone(self, plan: RetrievePlan, queries: list[str], vectors: list[Any]) -> list[list[Hit]]:
        engine, found, failures = self.tools.backend, [], []
        for query, vector in zip(queries, vectors, strict=True):
            try:
                (hits,) = guarded(engine.batch_search, [query], plan.k, plan.request.method, vector)
            except BackendFailure as exc:
                failures.append((query, exc))
                hits = []
            found.append(hits)
        if len(failures) == len(queries):
            raise failures[0][1]
        plan.failed(failures)
        return found

    async def _embedded(self, queries: list[str]) -> list[Any]:
        """The vectors of ``queries`` from the prefetcher: one query as a tool call's, many in one pass."""
        texts = [format_query(query, self.prefetch.query_task) for query in queries]
        if len(texts) == 1:  # a tool call's one query: it joins the other requests' dynamic batches
            work = _listed(self.prefetch.aembed(texts[0]))
        else:  # a request's batch: one forward pass
            work = self.prefetch.aembed_batch(texts)
        try:
            return await asyncio.wait_for(work, self.limits.request_timeout_s)
        except TimeoutError:
            raise self._timeout("query embedding") from None
        except (BackendFailure, ServiceError):
            raise
        except Exception as exc:
            raise BackendFailure(f"query embedding failed: {type(exc).__name__}: {exc}") from exc

    async def _pooled(self, method: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, method, *args)

    async def _deadline(self, work: Any, what: str) -> Any:
        try:
            return await asyncio.wait_for(work, self.limits.request_timeout_s)
        except TimeoutError:
            raise self._timeout(what) from None

    async def _run(self, query: str | None, method: Any, *args: Any) -> Any:
        """``method(backend, *args)``: inline, inline with ``query``'s embedding prefetched, or on the pool."""
        backend = self.tools.backend
        if query is None:
            return method(backend, *args)
        if self.prefetch is not None:
            (vector,) = await self._embedded([query])
            return method(_GivenVector(backend, query, vector), *args)
        return await self._deadline(self._pooled(method, backend, *args), "tool call")

    def _timeout(self, what: str) -> TimeoutError:
        return TimeoutError(f"the {what} took longer than {self.limits.request_timeout_s:g} s")

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


async def _listed(vector: Any) -> list[Any]:
    return [await vector]


def _embedded_query(args: Any) -> str | None:
    """The query a call will embed (a vector or rrf search), else None."""
    if isinstance(args, SearchArgs) and not args.only_title and args.method != "keywords":
        return args.query
    return None


def _request(model: Any, arguments: Any) -> Any:
    try:
        return validated(model, arguments)
    except RequestError as exc:
        raise ServiceError(422, "invalid_request", str(exc)) from exc
