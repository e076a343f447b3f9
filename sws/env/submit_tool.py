"""The ``submit_answer`` tool (CONTRACT.md §3): it ends the episode; the agent answers it itself."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sws.env.tool import DEFAULT_OPTIONS, Tool, ToolOptions, function_schema


def submit_schema(options: ToolOptions) -> dict[str, Any]:
    """§3 byte for byte."""
    return function_schema(
        "submit_answer",
        "Submit the final answer and end the episode: a short exact string, "
        "or one Markdown table when the question requires it.",
        {
            "answer": {
                "type": "string",
                "description": "Final answer only (short string or one Markdown table), no explanation.",
            }
        },
        ["answer"],
    )


@dataclass(frozen=True, slots=True)
class SubmitArgs:
    """The answer as the model sent it (any JSON value)."""

    answer: Any

    @classmethod
    def parse(cls, raw: dict[str, Any], options: ToolOptions = DEFAULT_OPTIONS) -> SubmitArgs:
        return cls(raw.get("answer"))


def submit_observation(answer: Any) -> str:
    """``{"status": "done", "answer": str(answer or "")}``; a null, missing or empty answer becomes ``""``."""
    return json.dumps({"status": "done", "answer": str(answer or "")}, ensure_ascii=False)


def _run(backend: Any, args: SubmitArgs) -> str:
    return submit_observation(args.answer)


SUBMIT_ANSWER = Tool("submit_answer", submit_schema, SubmitArgs, _run, ends_episode=True)
