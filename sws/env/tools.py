"""One dispatch for the model's tool calls over the registry: ``WikiTools.call_tool(name, arguments_json)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sws.env.arguments import parse_arguments
from sws.env.observations import error_observation
from sws.env.registry import TOOL_NAMES, registered_tools
from sws.env.tool import Tool, ToolOptions
from sws.types import SearchBackend


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call, parsed: the tool, its arguments, and the name and raw arguments error observations quote."""

    name: str
    arguments: str
    tool: Tool
    args: Any

    def run(self, backend: SearchBackend) -> str:
        return self.tool.run(backend, self.args)

    def observe(self, error: BaseException) -> str:
        """The error observation of ``error``, raised by this call."""
        return error_observation(self.name, self.arguments, error)


class WikiTools:
    """The registered tools (``sws.env.registry``) over a search backend.

    Stateless: as thread-safe as the backend. Tools registered later are not seen by this instance.

    Args:
        backend: the search engine (``sws.types.SearchBackend``).
        options: :class:`sws.env.tool.ToolOptions` fields (``max_top_k``, ``link_mode``, ...).
    """

    def __init__(self, backend: SearchBackend, **options: Any) -> None:
        self.backend = backend
        self.options = ToolOptions(**options)
        self.registered = registered_tools()
        self.registered_schemas = [tool.schema(self.options) for tool in self.registered.values()]
        # what the model is offered by default: the contract's three, under these options
        self.schemas = [s for s in self.registered_schemas if s["function"]["name"] in TOOL_NAMES]

    def parse(self, name: str, arguments_json: str | None) -> ToolCall | str:
        """The call parsed, or the error observation of what the model got wrong (JSON, arguments, name).

        The observation's ``arguments`` field is the raw string (``"{}"`` when the model sent none).
        """
        name = str(name or "").strip()
        raw = arguments_json or "{}"
        text = raw if isinstance(raw, str) else repr(raw)
        try:
            args = parse_arguments(raw)
            tool = self.registered.get(name)
            if tool is None:
                raise ValueError(f"Unknown tool: {name}")
            return ToolCall(name, text, tool, tool.Args.parse(args, self.options))
        except Exception as error:  # noqa: BLE001 - the contract: the model's mistakes become observations
            return error_observation(name, text, error)

    def call_tool(self, name: str, arguments_json: str | None) -> str:
        """Run one model tool call and return its observation; never raises.

        Any exception (bad JSON or arguments, unknown tool, backend failure) becomes the error observation;
        ``sws.env.guard.call_tool`` raises backend failures instead.
        """
        call = self.parse(name, arguments_json)
        if isinstance(call, str):
            return call
        try:
            return call.run(self.backend)
        except Exception as error:  # noqa: BLE001 - the contract: every failure becomes an observation
            return call.observe(error)
