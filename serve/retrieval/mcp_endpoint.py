"""The MCP endpoint: the registered tools (``search``, ``open_url``, ...) over streamable HTTP, for standard
MCP clients; not ``submit_answer`` (a tool that ends an agent's episode: an MCP client ends its own).

Stateless with JSON responses: any replica answers any request, so no session affinity is needed behind
Serve's load balancing. A ``GET`` stream carries nothing here (a stateless server sends no unsolicited
messages) yet holds one of the replica's request slots, so ``StreamLimit`` bounds how many are open and
how long an idle one stays. Tool schemas are the registry's (the contract's, CONTRACT §1.1, §2.1) and the text
result is the observation ``call_tool`` gives; a call the model got wrong is flagged ``isError``. The SDK's own
DNS-rebinding check is off: the app's ``RequestGuard`` checks ``Host`` and ``Origin`` on every route
(``sws.host_guard``). Needs the ``mcp`` package.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from serve.retrieval.http_app import error_response
from serve.retrieval.service import RetrievalService

_ERROR_PREFIX = '{"status": "error"'
INSTRUCTIONS = (
    "Offline English Wikipedia. `search` returns markdown hits with chunk URLs; `open_url` opens a chunk "
    "(#chunk-N) or, without the fragment, the whole article."
)


class StreamLimit:
    """ASGI wrapper of the MCP app: at most ``max_streams`` open ``GET`` streams (503 JSON beyond, with
    ``Retry-After``), each closed after ``idle_s`` without a message (keep-alive pings do not count).

    Args:
        app: the MCP ASGI app.
        max_streams: open GET streams at most (per replica: each holds a request slot).
        idle_s: seconds a GET stream stays open without sending a message.
        retry_after_s: ``Retry-After`` of the 503.
    """

    def __init__(self, app: Any, *, max_streams: int, idle_s: float, retry_after_s: float = 1.0):
        self.app, self.max_streams, self.idle_s = app, max_streams, idle_s
        self.retry_after = str(max(1, math.ceil(retry_after_s)))
        self.open = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["method"] != "GET":
            return await self.app(scope, receive, send)
        if self.open >= self.max_streams:
            response = error_response(
                503,
                "too_many_streams",
                f"{self.open} MCP GET streams are open, the most this replica holds",
                {"retry-after": self.retry_after},
            )
            return await response(scope, receive, send)
        self.open += 1
        last_message, started, finished = time.monotonic(), False, False

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal last_message, started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body":
                body = message.get("body", b"")
                if body and not body.startswith(b":"):  # an SSE comment line is a keep-alive ping
                    last_message = time.monotonic()
                finished = not message.get("more_body", False)
            await send(message)

        try:
            async with anyio.create_task_group() as streams:

                async def close_when_idle() -> None:
                    while (left := last_message + self.idle_s - time.monotonic()) > 0:
                        await anyio.sleep(left)
                    streams.cancel_scope.cancel()

                streams.start_soon(close_when_idle)
                await self.app(scope, receive, tracked_send)
                streams.cancel_scope.cancel()
            if started and not finished:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.open -= 1


def make_mcp(
    service: RetrievalService,
    *,
    max_streams: int = 16,
    stream_idle_s: float = 120.0,
    retry_after_s: float = 1.0,
) -> tuple[Any, Callable[[], AbstractAsyncContextManager]]:
    """``(asgi_app, lifespan)``: mount the app at ``/mcp`` and run ``lifespan()`` for the app's lifetime.
    ``max_streams``, ``stream_idle_s``, ``retry_after_s``: the ``StreamLimit`` of its GET streams."""
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

    from sws import __version__

    offered = {name for name, tool in service.tools.registered.items() if not tool.ends_episode}
    tools = [
        types.Tool(
            name=schema["function"]["name"],
            description=schema["function"]["description"],
            input_schema=schema["function"]["parameters"],
        )
        for schema in service.schemas
        if schema["function"]["name"] in offered
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name in offered:
            arguments = json.dumps(params.arguments or {}, ensure_ascii=False)
            text = await service.acall(params.name, arguments)
        else:
            from sws.env import error_observation

            text = error_observation(params.name, "{}", ValueError(f"Unknown tool: {params.name}"))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=text.startswith(_ERROR_PREFIX)
        )

    server = Server(
        "sws-wikipedia",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    app = StreamLimit(
        StreamableHTTPASGIApp(manager),
        max_streams=max_streams,
        idle_s=stream_idle_s,
        retry_after_s=retry_after_s,
    )
    return app, manager.run
