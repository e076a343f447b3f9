"""vLLM's tool-call and reasoning parsers per model family, checked against what the chat template emits.

What the reference's SGLang launch set per family (CONTRACT §9.1) maps to vLLM's parsers: Qwen3* get the
``qwen3`` reasoning parser and a tool-call parser for the format of their template: ``qwen3_coder`` for the
XML form (``<tool_call><function=name>``: Qwen3.5, Qwen3-Coder, the paper's models), ``hermes`` for the JSON
form (``<tool_call>{"name": ..., "arguments": ...}``: plain Qwen3). Gemma-4 ``gemma4``/``gemma4``; Mistral
``mistral`` (plus the ``mistral`` reasoning parser for reasoning/Magistral models).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sws.agent.family import model_family

# family -> (tool-call parser, reasoning parser) of vLLM
FAMILY_PARSERS: dict[str, tuple[str | None, str | None]] = {
    "qwen3": ("qwen3_coder", "qwen3"),
    "gemma4": ("gemma4", "gemma4"),
    "mistral": ("mistral", None),
}
_QWEN3_XML_NAME = re.compile(r"qwen3(\.[5-9]|_[5-9]|-coder)")


def template_tool_format(template: str) -> str | None:
    """``"qwen3_coder"`` or ``"hermes"``: the tool-call form a Qwen-style chat template writes; None: neither."""
    if "<function=" in template:
        return "qwen3_coder"
    if "<tool_call>" in template and '"arguments": ' in template:
        return "hermes"
    return None


def chat_template(model: str, override: str | None = None) -> str | None:
    """The chat template the engine will use: ``override`` (a file or the template itself), else a local model
    directory's ``chat_template.jinja`` or ``tokenizer_config.json`` entry; None when neither is readable."""
    if override is not None:
        path = Path(override)
        return path.read_text(encoding="utf-8") if "{" not in override and path.is_file() else override
    folder = Path(model)
    if (folder / "chat_template.jinja").is_file():
        return (folder / "chat_template.jinja").read_text(encoding="utf-8")
    if (folder / "tokenizer_config.json").is_file():
        template = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8")).get(
            "chat_template"
        )
        if isinstance(template, list):  # named templates: the one for tools, else the default
            named = {t.get("name"): t.get("template") for t in template}
            template = named.get("tool_use") or named.get("default")
        return template if isinstance(template, str) else None
    return None


def parsers(model: str, template: str | None = None) -> tuple[str | None, str | None]:
    """``(tool_call_parser, reasoning_parser)`` for the model's family (``sws.agent.model_family``); for Qwen3
    the tool-call form of ``template`` (or of the model's own, if local) decides, else the name; a family
    without a parser of its own gets the form its template writes (SmolLM2 with sws's template: hermes)."""
    family = model_family(model)
    tool, reasoning = FAMILY_PARSERS.get(family, (None, None))
    written = template_tool_format(template or chat_template(model) or "")
    if family == "qwen3":
        tool = written or ("qwen3_coder" if _QWEN3_XML_NAME.search(model.lower()) else "hermes")
    elif tool is None:  # a family without its own parser: the form its (or sws's) chat template writes
        tool = written
    if family == "mistral" and any(w in model.lower() for w in ("reasoning", "magistral")):
        reasoning = "mistral"
    return tool, reasoning
