"""Fixtures: a scripted LLM server on a free port, a tools object that records its calls, episode runners."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from sws.agent import AgentConfig, LLMEndpoint, SearchAgent
from sws.agent.scripted_server import ScriptedLLMServer

SEARCH_HEAD = (
    "1. [Paris](https://en.wikipedia.org/wiki/22989#chunk-1)\n   - Paris is the capital of France.\n"
)


class RecordingTools:
    """Stands in for ``sws.env.WikiTools``: numbered outputs of ``size`` characters; records every call.

    ``fail`` maps a tool name to a list of exceptions raised by its successive calls (None: answer normally).
    """

    def __init__(self, size: int = 100, fail: dict[str, list] | None = None):
        self.size = size
        self.fail = {k: list(v) for k, v in (fail or {}).items()}
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def call_tool(self, name: str, arguments_json: str) -> str:
        with self._lock:
            self.calls.append((name, arguments_json))
            n = len(self.calls)
            errors = self.fail.get(name)
            error = errors.pop(0) if errors else None
        if error is not None:
            raise error
        json.loads(arguments_json)  # bad JSON raises, as a real dispatcher does
        head = (
            f"{SEARCH_HEAD}[{name} #{n}] " if name == "search" else f"# Paris (chunk 1/2)\n\n[{name} #{n}] "
        )
        return (head + "x" * self.size)[: max(self.size, len(head))]


def _run_episodes(url, model, questions, tools=None, *, first_index=0, endpoint=None, agent=None, **config):
    """Run episodes concurrently (question i gets index ``first_index + i``); returns the episodes."""

    async def go():
        llm = LLMEndpoint(
            url, **{"timeout": 10, "backoff_s": 0.01, "backoff_max_s": 0.05, **(endpoint or {})}
        )
        runner = SearchAgent(
            llm, tools or RecordingTools(), AgentConfig(model=model, **config), **(agent or {})
        )
        try:
            return await asyncio.gather(*(runner.run(q, first_index + i) for i, q in enumerate(questions)))
        finally:
            await llm.close()

    return asyncio.run(go())


def _run_episode(url, model, question="Who?", tools=None, index=0, **kwargs):
    return _run_episodes(url, model, [question], tools, first_index=index, **kwargs)[0]


@pytest.fixture
def server():
    with ScriptedLLMServer(policy="search_then_submit") as s:
        yield s


@pytest.fixture
def tools():
    return RecordingTools()


@pytest.fixture
def make_tools():
    """The RecordingTools class."""
    return RecordingTools


@pytest.fixture
def run_episode():
    """``run_episode(url, model, question="Who?", tools=None, index=0, **kwargs)`` -> Episode."""
    return _run_episode


@pytest.fixture
def run_episodes():
    """``run_episodes(url, model, questions, tools=None, *, first_index=0, endpoint=None, agent=None, **config)``."""
    return _run_episodes
