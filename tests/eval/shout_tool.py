"""A test-only fourth tool, registered when imported (``tools.modules=[tests.eval.shout_tool]``), as a tool
module of a user's would be: ``shout`` repeats its text in capitals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sws.env import Tool, ToolOptions, function_schema, register_tool


@dataclass(frozen=True)
class ShoutArgs:
    text: str

    @classmethod
    def parse(cls, raw: dict[str, Any], options: ToolOptions) -> ShoutArgs:
        if not isinstance(raw.get("text"), str):
            raise TypeError("text must be a string")
        return cls(raw["text"])


def shout_schema(options: ToolOptions) -> dict[str, Any]:
    return function_schema(
        "shout",
        "Repeat the text in capitals.",
        {"text": {"type": "string", "description": "What to shout."}},
        ["text"],
    )


SHOUT = register_tool(Tool("shout", shout_schema, ShoutArgs, lambda backend, args: args.text.upper()))
