"""``sws eval`` against what ``sws serve --llm`` serves (not a benchmark itself; standard library only, so the
GPU check's orchestration can use it): the ready line's LLM at ``llm_url``, its tools at ``url``, the bundled
Bamboogle questions. Used by ``llm_serve.py`` and ``gpu_check.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "sws" / "data" / "bamboogle_test.flashrag.jsonl"
READY_PREFIX = '{"event": "ready"'  # how `sws serve`'s ready line starts (serve.launch.print_ready)


def ready_event(stdout: str) -> dict[str, Any]:
    """The last ready line of ``sws serve``'s stdout, with ``llm_url`` and ``llm_model`` (``--llm``).

    Raises:
        ValueError: no ready line, or one without the LLM.
    """
    lines = [line for line in stdout.splitlines() if line.startswith(READY_PREFIX)]
    if not lines:
        raise ValueError(f"no ready line ({READY_PREFIX}...) in sws serve's output: {stdout[-300:]!r}")
    event = json.loads(lines[-1])
    if "llm_url" not in event or "llm_model" not in event:
        raise ValueError(f"sws serve's ready line names no LLM (was it started with --llm?): {lines[-1]}")
    return event


def eval_command(python: str, ready: dict[str, Any], out: Path, questions: int, *overrides: str) -> list[str]:
    """``sws eval`` of the first ``questions`` Bamboogle questions against the served LLM and tools, results in
    ``out`` (a fresh folder: an existing run there is resumed), config ``overrides`` last (``-c PROFILE``,
    ``eval.<field>=<value>``)."""
    return [
        python,
        "-m",
        "sws",
        "eval",
        "--dataset",
        "bamboogle",
        "--data",
        str(DATASET),
        "--limit",
        str(questions),
        "--llm-base-url",
        ready["llm_url"],
        "--model",
        ready["llm_model"],
        "--tools-url",
        ready["url"],
        "--out",
        str(out),
        *overrides,
    ]
