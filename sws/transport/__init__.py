"""One tool client for the agent: ``call_tool(name, arguments_json)`` in-process, through a Serve deployment
handle, or over HTTP, chosen by config (``sws.config.ToolClientConfig``), with timeouts and retries.

Every client also has ``async acall_tool`` (awaited by ``sws.agent.ToolRunner``) and ``close()``. Observations
are byte-identical across the three (tests pin it). Errors: the model's mistakes are observations; input
the service refuses (e.g. an oversize request) raises :class:`ToolRequestError` (the agent shows it to the
model); overload, lost replicas or connections and timeouts are retried (``sws.transport.retry``); what
still fails raises ``sws.agent.FatalToolError``.

    tools = make_tool_client(ToolClientConfig(transport="http", url="http://127.0.0.1:11536"))
    tools.call_tool("search", '{"query": "Alan Turing", "top_k": 3}')
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import Any

from sws.config import TRANSPORTS, ToolClientConfig, merge_section
from sws.transport.calls import BackendFailure, GuardedBackend, call_tool, guarded_tools
from sws.transport.handle import HandleTools
from sws.transport.http import HttpTools, ToolRequestError
from sws.transport.inprocess import InProcessTools
from sws.transport.retry import RetryPolicy, TransientError

__all__ = [
    "BackendFailure",
    "GuardedBackend",
    "HandleTools",
    "HttpTools",
    "InProcessTools",
    "RetryPolicy",
    "ToolRequestError",
    "TransientError",
    "call_tool",
    "guarded_tools",
    "make_tool_client",
    "tool_client_factory",
]


def _config(cfg: ToolClientConfig | dict[str, Any] | None) -> ToolClientConfig:
    return merge_section(ToolClientConfig, cfg, "tools")


def make_tool_client(
    cfg: ToolClientConfig | dict[str, Any] | None = None, *, index: str | None = None
) -> InProcessTools | HandleTools | HttpTools:
    """The client ``cfg.transport`` names; ``index`` is the fallback for an in-process ``cfg.index``.

    Raises:
        ValueError: unknown transport, bad values, or in-process without an index.
    """
    cfg = _config(cfg)
    if cfg.transport not in TRANSPORTS:
        raise ValueError(f"transport={cfg.transport!r}: expected one of {list(TRANSPORTS)}")
    policy = RetryPolicy(cfg.timeout_s, cfg.max_attempts, cfg.backoff_s, cfg.backoff_max_s)
    if cfg.transport == "http":
        token = os.environ.get(cfg.token_env) if cfg.token_env else None
        return HttpTools(cfg.url, token=token, policy=policy, max_connections=cfg.max_connections)
    if cfg.transport == "handle":
        return HandleTools(cfg.app_name, policy)
    path = cfg.index or index
    if not path:
        raise ValueError("the in-process transport needs an index directory (tools.index or index.out)")
    options = asdict(cfg.tools) if is_dataclass(cfg.tools) else dict(cfg.tools)
    return InProcessTools.open(path, **options)


def tool_client_factory(
    cfg: ToolClientConfig | dict[str, Any] | None = None, *, index: str | None = None
) -> Callable[[], InProcessTools | HandleTools | HttpTools]:
    """A picklable zero-argument factory (for ``sws.eval`` workers, which build their tools remotely)."""
    plain = asdict(_config(cfg))
    return functools.partial(make_tool_client, plain, index=index)
