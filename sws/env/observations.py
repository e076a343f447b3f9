"""The error observation (CONTRACT.md §6.6): what the model sees when a call fails."""

from __future__ import annotations

import json

ERROR_HINT = "Fix tool arguments and call tool again. For search, provide non-empty 'query'."


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
