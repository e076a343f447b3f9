"""Running one tool call of the model (CONTRACT.md §3, §6.6): a registered tool that ends the episode
(``submit_answer``) here, the rest through a tools object.

Observation strings (the tool's own, the error observation) come from ``sws.env``, shared with ``WikiTools``.

Errors split three ways. Transient ones (HTTP 429/502/503/504, transport errors and timeouts,
``sws.env.TransientToolError``) are retried (``sws.retry``) and become fatal when they outlast the retries.
Fatal ones (``sws.env.FatalToolError``, HTTP >= 500) abort the episode. Everything else (bad
arguments, 4xx, unknown tools) becomes the JSON error observation the model sees.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from concurrent.futures import Executor
from typing import Any, Protocol, runtime_checkable

import httpx

from sws.env import (
    DEFAULT_OPTIONS,
    FatalToolError,
    TransientToolError,
    error_observation,
    get_tool,
    parse_arguments,
)
from sws.retry import RetryPolicy

_RETRY_STATUS = {429, 502, 503, 504}


@runtime_checkable
class ToolBox(Protocol):
    """What the loop needs from the tools: ``sws.env.WikiTools`` or an HTTP / Ray-handle client of it."""

    def call_tool(self, name: str, arguments_json: str) -> str:
        """The observation string for one call; raises on failure (see the module docstring)."""


def is_transient_tool_error(exc: BaseException) -> bool:
    if isinstance(exc, (TransientToolError, TimeoutError, httpx.TransportError)):
        return True
    return isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code in _RETRY_STATUS


def _is_fatal(exc: BaseException) -> bool:
    if isinstance(exc, (FatalToolError, httpx.TransportError, TransientToolError, TimeoutError)):
        return True
    return isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code >= 500


class ToolRunner:
    """Runs the model's tool calls against a :class:`ToolBox`, with retries and a per-call timeout.

    A tools object may also offer ``async acall_tool(name, arguments_json)``; it is awaited instead of running
    ``call_tool`` in a thread.

    Args:
        tools: the tools object.
        tool_names: names the model may call (others give ``Unknown tool: X``).
        timeout: seconds per attempt.
        max_attempts: attempts per call for transient errors, the first included.
        backoff_s: base of the full-jitter exponential backoff.
        backoff_max_s: cap of one wait.
        executor: thread pool for sync ``call_tool``; None means the event loop's default.
    """

    def __init__(
        self,
        tools: ToolBox,
        tool_names: Collection[str],
        timeout: float = 180.0,
        max_attempts: int = 4,
        backoff_s: float = 0.5,
        backoff_max_s: float = 10.0,
        executor: Executor | None = None,
    ):
        self.tools = tools
        self.tool_names = frozenset(tool_names)
        self.timeout = timeout
        self.max_attempts = max_attempts
        self._policy = RetryPolicy(timeout, max_attempts, backoff_s, backoff_max_s)
        self._executor = executor
        self._acall = getattr(tools, "acall_tool", None)

    async def run(self, name: str, arguments_json: str) -> str:
        """The observation for one call (an error observation when the model got something wrong).

        Raises:
            FatalToolError: the tool service failed in a way the model cannot fix.
        """
        try:
            if name not in self.tool_names:
                raise ValueError(f"Unknown tool: {name}")
            tool = get_tool(name)
            if tool is not None and tool.ends_episode:
                return tool.run(None, tool.Args.parse(parse_arguments(arguments_json), DEFAULT_OPTIONS))
            output = await self._call_with_retries(name, arguments_json)
            return output if isinstance(output, str) else str(output or "")
        except Exception as exc:
            if _is_fatal(exc):
                raise FatalToolError(f"{name}: {type(exc).__name__}: {exc}") from exc
            return error_observation(name, arguments_json, exc)

    async def _call_with_retries(self, name: str, arguments_json: str) -> str:
        async for attempt in self._policy.aattempts(is_transient_tool_error):
            with attempt:
                output = await asyncio.wait_for(self._call(name, arguments_json), self.timeout)
        return output

    async def _call(self, name: str, arguments_json: str) -> Any:
        if self._acall is not None:
            return await self._acall(name, arguments_json)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.tools.call_tool, name, arguments_json)
