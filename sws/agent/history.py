"""Tool-history compression (CONTRACT.md §6.4), applied to a copy of the history before every LLM request."""

from __future__ import annotations

from typing import Any

from sws.config.agent import AgentConfig

_DEFAULT = AgentConfig()


def compress_history(
    messages: list[dict[str, Any]],
    keep_recent_tool_results: int = _DEFAULT.keep_recent_tool_results,
    tool_result_max_chars: int = _DEFAULT.tool_result_max_chars,
) -> list[dict[str, Any]]:
    """A copy of ``messages`` where every tool message but the last ``keep_recent_tool_results`` is cut.

    A cut message keeps ``tool_result_max_chars`` characters plus ``...[truncated N chars]``. The count is per
    tool message, not per step; other messages and the input list are never changed.
    """
    out = list(messages)
    seen = 0
    for i in range(len(out) - 1, -1, -1):
        msg = out[i]
        if msg.get("role") != "tool":
            continue
        seen += 1
        content = msg.get("content")
        if (
            seen > keep_recent_tool_results
            and isinstance(content, str)
            and len(content) > tool_result_max_chars
        ):
            removed = len(content) - tool_result_max_chars
            out[i] = {**msg, "content": f"{content[:tool_result_max_chars]}...[truncated {removed} chars]"}
    return out
