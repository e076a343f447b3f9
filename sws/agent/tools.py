"""Running one tool call of the model (CONTRACT.md §3, §6.6): a registered tool that ends the episode
(``submit_answer``) here, the rest through a tools object.

Observation strings (the tool's own, the error observation) come from ``sws.env``, shared with ``WikiTools``.

Retrying is the tools object's, in one layer: the remote clients (``sws.transport``) retry transient failures
under their ``RetryPolicy`` (``tools.*``), each attempt within its deadline, and raise
``sws.env.FatalToolError`` once it is spent. So errors split two ways here. Fatal ones abort the episode:
``FatalToolError``, and a transient failure or a timeout that reached the runner all the same (from a tools
object without retries of its own, or past the runner's own deadline, when one is set). Everything else (bad
arguments, input the service refused, unknown tools) becomes the JSON error observation the model sees.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from concurrent.futures import Executor
from typing import Any, Protocol, runtime_checkable

from sws.env import (
    DEFAULT_OPTIONS,
    FatalToolError,
    TransientToolError,
    error_observation,
    get_tool,
    parse_arguments,
)


@runtime_checkable
class ToolBox(Protocol):
    """What the loop needs from the tools: ``sws.env.WikiTools`` or an HTTP / Ray-handle client of it."""

    def call_tool(self, name: str, arguments_json: str) -> str:
        """The observation string for one call; raises on failure (see the module docstring)."""


def _is_fatal(exc: BaseException) -> bool:
    return isinstance(exc, (FatalToolError, TransientToolError, TimeoutError))


class ToolRunner:
    """Runs the model's tool calls against a :class:`ToolBox`.

    A tools object may also offer ``async acall_tool(name, arguments_json)``; it is awaited instead of running
    ``call_tool`` in a thread.

    Args:
        tools: the tools object.
        tool_names: names the model may call (others give ``Unknown tool: X``).
        timeout: one deadline for the whole call, the tools' retries included; None: the tools' own (the
            remote clients bound every attempt).
        executor: thread pool for sync ``call_tool``; None means the event loop's default.
    """

    def __init__(
        self,
        tools: ToolBox,
        tool_names: Collection[str],
        timeout: float | None = None,
        executor: Executor | None = None,
    ):
        self.tools = tools
        self.tool_names = frozenset(tool_names)
        self.timeout = timeout
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
            output = await asyncio.wait_for(self._call(name, arguments_json), self.timeout)
            return output if isinstance(output, str) else str(output or "")
        except Exception as exc:
            if _is_fatal(exc):
                raise FatalToolError(f"{name}: {type(exc).__name__}: {exc}") from exc
            return error_observation(name, arguments_json, exc)

    async def _call(self, name: str, arguments_json: str) -> Any:
        if self._acall is not None:
            return await self._acall(name, arguments_json)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.tools.call_tool, name, arguments_json)
