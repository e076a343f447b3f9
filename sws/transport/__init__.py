"""One tool client for the agent: ``call_tool(name, arguments_json)`` in-process, through a Serve deployment
handle, or over HTTP, with timeouts and retries.

Every client also has ``async acall_tool`` (awaited by ``sws.agent.ToolRunner``) and ``close()``. Observations
are byte-identical across the three (tests pin it). Errors (``sws.env.errors``): the model's mistakes are
observations; input the service refuses (e.g. an oversize request) raises ``ToolRequestError`` (the agent
shows it to the model); overload, lost replicas or connections and timeouts are retried (``sws.retry``); what
still fails raises ``FatalToolError``.

    tools = make_tool_client("http", url="http://127.0.0.1:11536")
    tools.call_tool("search", '{"query": "Alan Turing", "top_k": 3}')

The entry points (``sws eval``, ``sws serve``) turn a ``ToolClientConfig`` into these arguments.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from sws.env import ToolOptions
from sws.retry import RetryPolicy
from sws.transport.handle import HandleTools
from sws.transport.http import HttpTools
from sws.transport.inprocess import InProcessTools

TRANSPORTS = ("inprocess", "handle", "http")

__all__ = [
    "TRANSPORTS",
    "HandleTools",
    "HttpTools",
    "InProcessTools",
    "make_tool_client",
    "tool_client_factory",
]


def _check(transport: str, index: str | None) -> None:
    if transport not in TRANSPORTS:
        raise ValueError(f"transport={transport!r}: expected one of {list(TRANSPORTS)}")
    if transport == "inprocess" and not index:
        raise ValueError("the in-process transport needs an index directory (tools.index or index.out)")


def make_tool_client(
    transport: str = "inprocess",
    *,
    index: str | None = None,
    url: str = "",
    app_name: str = "sws",
    token: str | None = None,
    policy: RetryPolicy | None = None,
    max_connections: int = 256,
    tool_options: ToolOptions | None = None,
    embedding_endpoint: str | None = None,
) -> InProcessTools | HandleTools | HttpTools:
    """The client ``transport`` names.

    Args:
        transport: ``inprocess`` (open ``index`` here), ``handle`` (the Serve app ``app_name``, inside the
            cluster) or ``http`` (the service at ``url``, bearer ``token`` if any).
        policy: per-attempt timeout and retries of the remote transports.
        max_connections: http: connection-pool size per process.
        tool_options: inprocess: the tools' options (a service applies its own).
        embedding_endpoint: inprocess: embed queries at this ``/v1/embeddings`` server (``InProcessTools.open``).

    Raises:
        ValueError: unknown transport, or in-process without an index.
    """
    _check(transport, index)
    if transport == "http":
        return HttpTools(url, token=token, policy=policy, max_connections=max_connections)
    if transport == "handle":
        return HandleTools(app_name, policy)
    options = dataclasses.asdict(tool_options) if tool_options else {}
    return InProcessTools.open(index, embedding_endpoint=embedding_endpoint, **options)


def tool_client_factory(transport: str = "inprocess", **options: Any) -> Callable[[], Any]:
    """A picklable zero-argument :func:`make_tool_client` (for ``sws.eval`` workers, which build their tools
    remotely); ``options`` are its keyword arguments, the transport checked here.

    Raises:
        ValueError: unknown transport, or in-process without an index.
    """
    _check(transport, options.get("index"))
    return functools.partial(make_tool_client, transport, **options)
