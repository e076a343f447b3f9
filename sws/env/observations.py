"""The JSON observations: the ``submit_answer`` result (CONTRACT.md §3) and the error observation (§6.6)."""

from __future__ import annotations

import json
from typing import Any

ERROR_HINT = "Fix tool arguments and call tool again. For search, provide non-empty 'query'."


def submit_observation(answer: Any) -> str:
    """``{"status": "done", "answer": str(answer or "")}``; a null, missing or empty answer becomes ``""``."""
    return json.dumps({"status": "done", "answer": str(answer or "")}, ensure_ascii=False)


def error_observation(tool: str, arguments: str, error: BaseException) -> str:
    """What the model sees when a call fails: status, tool, raw arguments, error type and message, hint."""
    return json.dumps(
        {
            "status": "error",
            "tool": tool,
            "arguments": arguments,
            "error_type": type(error).__name__,
            "error": str(error),
            "hint": ERROR_HINT,
        },
        ensure_ascii=False,
    )
