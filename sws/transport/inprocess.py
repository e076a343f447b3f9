"""The tools in this process, over an opened index (the embedded default)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sws.env import BackendFailure, FatalToolError, ToolOptions, WikiTools, call_tool


class InProcessTools:
    """``call_tool`` straight on ``WikiTools``; a backend failure raises ``FatalToolError``.

    Args:
        tools: the tools (see :meth:`open`).
    """

    def __init__(self, tools: WikiTools):
        self.tools = tools

    @classmethod
    def open(
        cls,
        index: str | Path,
        *,
        embedder: Any = None,
        ef_search: int | None = None,
        verify: bool = False,
        embedding_endpoint: str | None = None,
        **tool_options: Any,
    ) -> InProcessTools:
        """Open ``index`` (``SearchEngine.open``; ``verify``: check every file's checksum too; queries
        embedded at ``embedding_endpoint`` when given, ``sws.index.embedders.endpoint``); ``tool_options`` are
        ``WikiTools`` keyword arguments.

        Raises:
            SwsIndexError: the index does not open, or the endpoint fails its check (``EmbeddingError``).
        """
        from sws.index.embedders.endpoint import endpoint_embedder
        from sws.index.manifest import read_manifest
        from sws.search import SearchEngine

        if embedding_endpoint:
            embedder = endpoint_embedder(read_manifest(Path(index))["embedder"], embedding_endpoint)
        engine = SearchEngine.open(index, embedder=embedder, ef_search=ef_search, verify=verify)
        return cls(WikiTools(engine, **tool_options))

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return self.tools.schemas

    @property
    def options(self) -> ToolOptions:
        """The options its tools parse, run and describe themselves under."""
        return self.tools.options

    def call_tool(self, name: str, arguments_json: str) -> str:
        try:
            return call_tool(self.tools, name, arguments_json)
        except BackendFailure as exc:
            raise FatalToolError(f"{name}: {exc}") from exc

    async def acall_tool(self, name: str, arguments_json: str) -> str:
        return await asyncio.to_thread(self.call_tool, name, arguments_json)

    def close(self) -> None:
        pass
