"""The MCP endpoint: tools ``search`` and ``open_url`` over streamable HTTP, for standard MCP clients.

Stateless with JSON responses: any replica answers any request, so no session affinity is needed behind
Serve's load balancing. Tool schemas are the contract's (CONTRACT §1.1, §2.1) and the text result is the
observation ``call_tool`` gives; a call the model got wrong is flagged ``isError``. DNS-rebinding checks
are off here because the service has its own host binding and bearer token. Needs the ``mcp`` package.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from serve._service import RetrievalService

MCP_TOOLS = ("search", "open_url")
_ERROR_PREFIX = '{"status": "error"'
INSTRUCTIONS = (
    "Offline English Wikipedia. `search` returns markdown hits with chunk URLs; `open_url` opens a chunk "
    "(#chunk-N) or, without the fragment, the whole article."
)


def make_mcp(service: RetrievalService) -> tuple[Any, Callable[[], AbstractAsyncContextManager]]:
    """``(asgi_app, lifespan)``: mount the app at ``/mcp`` and run ``lifespan()`` for the app's lifetime."""
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

    from sws import __version__

    tools = [
        types.Tool(
            name=schema["function"]["name"],
            description=schema["function"]["description"],
            input_schema=schema["function"]["parameters"],
        )
        for schema in service.schemas
        if schema["function"]["name"] in MCP_TOOLS
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name in MCP_TOOLS:
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
    return StreamableHTTPASGIApp(manager), manager.run
