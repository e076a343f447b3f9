"""The HTTP face of the retrieval service (a lean Starlette app; Serve runs it as the ingress).

    POST /call       {"name": "search", "arguments": "{\\"query\\": ...}"}  -> {"content": observation}
    POST /search     the search tool's arguments  -> {"content", "hits": [...], "query", "top_k", ...}
    POST /open_url   {"url": ...}                 -> {"content", "outcome", "page_id", "title", "chunk", ...}
    GET|POST /random {"mode": "chunk"|"page", "seed"} (GET: query parameters) -> like /open_url
    POST /retrieve   the RL trainers' retriever (Search-R1's batched form, rLLM's single; serve.retrieval.retrieve)
    POST /access     ASearcher's {"urls": [...]} -> {"result": [{"contents"} | null, ...]}
    GET  /tools      the OpenAI schemas of the registered tools (the contract's three)
    GET  /health     200 ok, or 503 "failing" for a while after a backend failure (never needs the token)
    GET  /info       index fingerprints and counts, versions, settings
    /mcp             MCP streamable HTTP (the registered tools but ``submit_answer``)

``/call`` answers like an in-process ``call_tool``: the model's mistakes are 200 with the error observation.
``/search``, ``/open_url`` and ``/random`` answer as the reference server does (its clients work unchanged,
CONTRACT §9.3): every tool outcome, "no such page" and "invalid URL" included, is 200 with the observation
in ``content``; a body its request models reject is 422 (malformed JSON too), an empty or over-long query
400. Every error is JSON ``{"error": {"status", "code", "message"}}``: malformed JSON 400 on ``/call``,
wrong content type 415, body over the bound 413, missing or wrong token 401, foreign ``Host`` or ``Origin``
403 (``sws.host_guard``), unknown path 404, wrong method 405, backend unavailable 503 (with
``Retry-After``), timeout 504.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serve.retrieval.response_cache import MAX_BYTES, ResponseCache
from serve.retrieval.service import RetrievalService, ServiceError
from sws.env import BackendFailure
from sws.host_guard import HostPolicy

OPEN_PATHS = frozenset({"/health"})  # reachable without the token, from any Host (load-balancer probes)
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
}


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """UTF-8 JSON (orjson: a whole article encodes ~5x faster than with ``json``); text with lone surrogates
    (valid JSON input, not encodable as UTF-8) falls back to ``\\u`` escapes."""
    try:
        body = orjson.dumps(data)
    except TypeError:  # orjson's error for lone surrogates (and for non-JSON types, which json rejects too)
        body = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return Response(body, status, headers, media_type="application/json")


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": {"status": status, "code": code, "message": message}}, status, headers)


async def _send_error(send: Any, status: int, code: str, message: str, headers: dict[str, str] | None = None):
    response = error_response(status, code, message, headers)
    await response({"type": "http"}, _never_receive, send)


def _text(header: bytes | None) -> str | None:
    return None if header is None else header.decode("latin-1")


async def _never_receive() -> dict[str, Any]:  # pragma: no cover - responses do not read
    return {"type": "http.disconnect"}


class RequestGuard:
    """ASGI middleware: ``Host`` and ``Origin`` (``hosts``) and bearer token (both except ``open_paths``), and
    the request-body bound; also in front of the actor LLM's OpenAI app (``serve/llm_deployments.py``).

    The body is read here, at most ``max_body_bytes`` (a larger ``Content-Length`` is refused before
    reading), then replayed to the app.
    """

    def __init__(
        self,
        app: Any,
        *,
        token: str | None,
        max_body_bytes: int,
        hosts: HostPolicy | None = None,
        open_paths: frozenset[str] = OPEN_PATHS,
        path_body_bytes: dict[str, int] | None = None,
    ):
        self.app = app
        self.token = (token or "").encode() or None
        self.max_body_bytes = max_body_bytes
        self.hosts = hosts
        self.open_paths = open_paths
        self.path_body_bytes = path_body_bytes or {}  # bounds of particular paths (the RL trainers' batches)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        root, path = scope.get("root_path", ""), scope["path"]
        relative = path[len(root) :] if root and path.startswith(root) else path
        if self.hosts is not None and relative not in self.open_paths:
            refused = self.hosts.refusal(_text(headers.get(b"host")), _text(headers.get(b"origin")))
            if refused is not None:
                return await _send_error(send, 403, *refused)
        if self.token is not None and relative not in self.open_paths and not self._authorized(headers):
            return await _send_error(
                send,
                401,
                "unauthorized",
                "missing or wrong bearer token",
                {"www-authenticate": 'Bearer realm="sws"'},
            )
        bound = self.path_body_bytes.get(relative, self.max_body_bytes)
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return await _send_error(send, 400, "bad_request", "invalid Content-Length header")
            if declared > bound:
                return await _send_error(send, 413, "body_too_large", self._too_large(declared, bound))
        if scope["method"] in ("GET", "HEAD", "DELETE", "OPTIONS") and length is None:
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > bound:
                return await _send_error(
                    send, 413, "body_too_large", self._too_large(size, bound, at_least=True)
                )
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body, replayed = b"".join(chunks), False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), self.token)

    @staticmethod
    def _too_large(size: int, bound: int, at_least: bool = False) -> str:
        return (
            f"request body of {'more than ' if at_least else ''}{size} bytes exceeds the {bound}-byte bound"
        )


async def _raw_json_body(request: Request) -> bytes:
    """The body of a JSON request, undecoded; another content type is 415."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise ServiceError(415, "unsupported_media_type", f"expected application/json, got {media or 'none'}")
    return await request.body()


async def _json_body(request: Request, invalid_status: int = 422, body: bytes | None = None) -> Any:
    """The decoded JSON body (``body``: already read); not JSON is ``invalid_status`` (422 as FastAPI
    answers it, 400 on ``/call``)."""
    if body is None:
        body = await _raw_json_body(request)
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, too deep
        raise ServiceError(invalid_status, "invalid_json", f"request body is not valid JSON: {exc}") from exc


async def _json_object(request: Request) -> dict[str, Any]:
    data = await _json_body(request, 400)
    if not isinstance(data, dict):
        raise ServiceError(400, "invalid_json", "request body must be a JSON object")
    return data


def _tool_call(body: dict[str, Any]) -> tuple[str, str]:
    """``{"name", "arguments"}`` or an OpenAI tool call ``{"function": {"name", "arguments"}}``."""
    call = body["function"] if isinstance(body.get("function"), dict) else body
    name, arguments = call.get("name"), call.get("arguments")
    if not isinstance(name, str):
        raise ServiceError(400, "invalid_argument", "'name' must be a string (the tool name)")
    if arguments is None:
        arguments = "{}"
    elif isinstance(arguments, (dict, list)):
        arguments = json.dumps(arguments, ensure_ascii=False)
    elif not isinstance(arguments, str):
        raise ServiceError(400, "invalid_argument", "'arguments' must be a JSON string (or an object)")
    return name, arguments


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""


async def until_disconnected(request: Request, work: Any) -> Any:
    """``await work``, cancelled as soon as the client disconnects (:class:`ClientGone`): a trainer that gave up
    on a batch leaves no embedding or search behind. The body must have been read."""
    task = asyncio.ensure_future(work)

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
    if task.cancelled():
        raise ClientGone()
    return task.result()


def make_http_app(
    service: RetrievalService,
    *,
    token: str | None = None,
    health: Callable[[], dict[str, Any]] | None = None,
    mcp: tuple[Any, Callable[[], contextlib.AbstractAsyncContextManager]] | None = None,
    retry_after_s: float = 1.0,
    open_url_cache: int = 0,
    open_url_cache_bytes: int = MAX_BYTES,
    hosts: HostPolicy | None = None,
) -> Any:
    """The ASGI app of the service.

    Args:
        service: the retrieval service.
        token: bearer token every route but ``/health`` requires; None or "" for none.
        health: extra fields for ``/health``.
        mcp: ``(asgi_app, lifespan)`` of the MCP endpoint (``serve.retrieval.mcp_endpoint.make_mcp``), or None for no ``/mcp``.
        retry_after_s: ``Retry-After`` of a 503 (backend unavailable).
        open_url_cache: how many rendered ``open_url`` answers (``/call`` and ``/open_url``) to keep, keyed
            by the exact request; 0 for none (``serve.retrieval.response_cache``).
        open_url_cache_bytes: at most that many bytes of them (answers and keys).
        hosts: the ``Host`` / ``Origin`` every route but ``/health`` must pass; None: any.
    """
    cache = ResponseCache(open_url_cache, open_url_cache_bytes)

    def cached(key: Any, response: Response) -> Response:
        cache.put(key, response.body)
        return response

    async def call(request: Request) -> Response:
        name, arguments = _tool_call(await _json_object(request))
        if name != "open_url":
            return json_response({"content": await service.acall(name, arguments)})
        key = ("/call", arguments)
        if (body := cache.get(key)) is not None:
            return Response(body, media_type="application/json")
        return cached(key, json_response({"content": await service.acall(name, arguments)}))

    async def search(request: Request) -> Response:
        return json_response(await service.asearch(await _json_body(request)))

    async def open_url(request: Request) -> Response:
        raw = await _raw_json_body(request)
        key = ("/open_url", raw)
        if (body := cache.get(key)) is not None:
            return Response(body, media_type="application/json")
        return cached(key, json_response(await service.aopen_url(await _json_body(request, body=raw))))

    async def random(request: Request) -> Response:
        arguments = dict(request.query_params) if request.method == "GET" else await _json_body(request)
        return json_response(await service.arandom(arguments))

    async def retrieve(request: Request) -> Response:
        answer = await until_disconnected(request, service.aretrieve(await _json_body(request)))
        errors = {"x-sws-query-errors": str(len(answer["errors"]))} if "errors" in answer else None
        return await run_in_threadpool(json_response, answer, 200, errors)  # megabytes for a rollout batch

    async def access(request: Request) -> Response:
        answer = await until_disconnected(request, service.aaccess(await _json_body(request)))
        return await run_in_threadpool(json_response, answer)

    async def tools(request: Request) -> Response:
        return json_response({"tools": service.schemas})

    async def healthz(request: Request) -> Response:
        state = service.health()
        status = 200 if state["status"] == "ok" else 503
        return json_response({**state, **(health() if health else {})}, status)

    async def info(request: Request) -> Response:
        return json_response(service.info())

    async def on_service_error(request: Request, exc: ServiceError) -> Response:
        retry = {"retry-after": str(max(1, math.ceil(retry_after_s)))} if exc.status == 503 else None
        return json_response(exc.body(), exc.status, retry)

    async def on_backend_failure(request: Request, exc: BackendFailure) -> Response:
        retry = {"retry-after": str(max(1, math.ceil(retry_after_s)))}
        return error_response(503, "backend_unavailable", str(exc), retry)

    async def on_timeout(request: Request, exc: TimeoutError) -> Response:
        return error_response(504, "timeout", str(exc))

    async def on_http_error(request: Request, exc: HTTPException) -> Response:
        code = _HTTP_CODES.get(exc.status_code, "error")
        return error_response(exc.status_code, code, str(exc.detail), dict(exc.headers or {}))

    async def on_client_gone(request: Request, exc: ClientGone) -> Response:
        return error_response(499, "client_closed_request", "the client went away; its work was cancelled")

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        return error_response(500, "internal", f"{type(exc).__name__} (see the replica log)")

    routes = [
        Route("/call", call, methods=["POST"]),
        Route("/search", search, methods=["POST"]),
        Route("/open_url", open_url, methods=["POST"]),
        Route("/random", random, methods=["GET", "POST"]),
        Route("/retrieve", retrieve, methods=["POST"]),
        Route("/access", access, methods=["POST"]),
        Route("/tools", tools, methods=["GET"]),
        Route("/health", healthz, methods=["GET"]),
        Route("/info", info, methods=["GET"]),
    ]
    if mcp is not None:
        routes.append(Route("/mcp", mcp[0], methods=["GET", "POST", "DELETE"]))

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp is not None:
                await stack.enter_async_context(mcp[1]())
            yield

    app = Starlette(
        routes=routes,
        exception_handlers={
            ServiceError: on_service_error,
            BackendFailure: on_backend_failure,
            TimeoutError: on_timeout,
            ClientGone: on_client_gone,
            HTTPException: on_http_error,
            Exception: on_unexpected,
        },
        lifespan=lifespan,
    )
    batch_bytes = max(service.limits.max_body_bytes, service.batch_body_bytes)
    return RequestGuard(
        app,
        token=token,
        max_body_bytes=service.limits.max_body_bytes,
        hosts=hosts,
        path_body_bytes={"/retrieve": batch_bytes, "/access": batch_bytes},
    )
