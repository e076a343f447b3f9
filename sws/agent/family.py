"""Per-model-family quirks of the request (CONTRACT.md §6.3 items 1 and 4, §6.5).

Mistral: tool-call ids remapped to 9 alphanumerics and ``content: null`` sent as ``""``, invalid function names
rejected, the round-budget reminder appended to a trailing tool message. Gemma-4: thinking switched off and
past reasoning removed. Every family: an assistant message's ``tool_calls: null`` (the SDK's dump of a text
reply) is left out, a deviation: vLLM refuses it (400, ``tool_calls`` must be a list), so the round after a
nudge failed there (SGLang, the reference's server, accepts it). Everything else is sent as stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

_VALID_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")


def model_family(model: str) -> str:
    """``"qwen3"``, ``"gemma4"``, ``"mistral"`` or ``"other"``, by name, else from a local ``config.json``."""
    family = _family_of(model)
    config = Path(model) / "config.json"
    if family == "other" and config.is_file():
        cfg = json.loads(config.read_text(encoding="utf-8"))
        names = [
            cfg.get("model_type"),
            *(cfg.get("architectures") or []),
            (cfg.get("text_config") or {}).get("model_type"),
        ]
        family = next((f for n in names if n and (f := _family_of(str(n))) != "other"), "other")
    return family


def _family_of(name: str) -> str:
    name = name.lower()
    if "qwen3" in name:
        return "qwen3"
    if "gemma-4" in name or "gemma4" in name:
        return "gemma4"
    if "mistral" in name or "ministral" in name:
        return "mistral"
    return "other"


def valid_tool_name(name: str) -> bool:
    """Whether a Mistral serving validator would accept this function name."""
    return bool(_VALID_TOOL_NAME.match(name))


def extra_body(family: str) -> dict[str, Any] | None:
    """Extra request fields for the family (Gemma-4: thinking off)."""
    return {"chat_template_kwargs": {"enable_thinking": False}} if family == "gemma4" else None


def rewrite_request_messages(messages: list[dict[str, Any]], family: str) -> list[dict[str, Any]]:
    """The family's rewrite of the (already compressed) request copy; the input list is not changed."""
    messages = [_without_null_tool_calls(m) for m in messages]
    if family == "mistral":
        return _mistral_messages(messages)
    if family == "gemma4":
        return [
            {k: v for k, v in m.items() if k not in ("reasoning", "reasoning_content")}
            if m.get("role") == "assistant"
            else m
            for m in messages
        ]
    return messages


def _without_null_tool_calls(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") == "assistant" and "tool_calls" in message and message["tool_calls"] is None:
        return {k: v for k, v in message.items() if k != "tool_calls"}
    return message


def _mistral_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids: dict[str, str] = {}
    used: set[str] = set()

    def remap(raw: str) -> str:
        if raw not in ids:
            ids[raw] = _mistral_id(raw, used)
            used.add(ids[raw])
        return ids[raw]

    out = []
    for m in messages:
        m = dict(m)
        if m.get("role") == "assistant":
            if m.get("content") is None:
                m["content"] = ""
            if m.get("tool_calls"):
                m["tool_calls"] = [{**tc, "id": remap(str(tc.get("id")))} for tc in m["tool_calls"]]
        elif m.get("role") == "tool" and m.get("tool_call_id") is not None:
            m["tool_call_id"] = remap(str(m["tool_call_id"]))
        out.append(m)
    return out


def _mistral_id(raw: str, used: set[str]) -> str:
    if _MISTRAL_ID.match(raw) and raw not in used:
        return raw
    digest = hashlib.sha1(raw.encode()).hexdigest()
    salt = 0
    while True:  # walk windows of the digest, then re-hash with a counter, until unused
        for start in range(len(digest) - 8):
            candidate = digest[start : start + 9]
            if candidate not in used:
                return candidate
        salt += 1
        digest = hashlib.sha1(f"{raw}#{salt}".encode()).hexdigest()
