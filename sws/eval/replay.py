"""Every recorded tool call of a run issued again against an environment (an index opened here, or a running
``sws serve``), its observation diffed byte for byte against the recorded one: ``sws compare --replay``.

A call is replayed as the agent ran it (``sws.agent.ToolRunner`` over the tools the record offered, so an
unknown tool or bad arguments give the same error observation) and grouped by tool, and ``search`` by method
(``search (keywords)``, ``search (only_title)``; ``search (invalid arguments)`` when they do not parse).
A tool message that answers no recorded call is counted and named, never replayed.

What is not deterministic: :data:`NOT_DETERMINISTIC`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sws.env import TOOL_NAMES, FatalToolError, get_tool, parse_arguments
from sws.eval.records import EpisodeRecord

NOT_DETERMINISTIC = (
    "rrf on the reference side: the reference orders equal fused scores in Python's string-hash order "
    "(PYTHONHASHSEED, new at every server start), so tied hits recorded by the reference can be listed in "
    "another order than a replay gives (sws breaks ties by score, best single-list rank, chunk id); vector "
    "(and rrf) queries embedded by another runtime or precision (the served OpenVINO bf16 beside torch fp32) "
    "can reorder near-ties; keywords, only_title, open_url and submit_answer are deterministic over the same "
    "index, and vector too with the same query embedder"
)
CONCURRENCY = 8


class ReplayError(RuntimeError):
    """The environment failed in a way no observation shows (unreachable, refused, a broken index)."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One recorded tool call: where it is (``message``: the tool message's position), what it was, what came back."""

    dataset: str
    id: str
    message: int
    tool: str
    arguments: str
    recorded: str
    offered: tuple[str, ...]

    @property
    def group(self) -> str:
        """The tool, and for ``search`` its method: what identity is counted per."""
        if self.tool != "search":
            return self.tool
        try:
            args = get_tool("search").Args.parse(parse_arguments(self.arguments))
        except (ValueError, TypeError):
            return "search (invalid arguments)"
        return f"search ({'only_title' if args.only_title else args.method})"


@dataclass(frozen=True, slots=True)
class ReplayedCall:
    call: RecordedCall
    replayed: str

    @property
    def identical(self) -> bool:
        return self.call.recorded.encode("utf-8", "surrogatepass") == self.replayed.encode(
            "utf-8", "surrogatepass"
        )


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Per group ``[calls, identical]``, the first differing calls (``shown``), how many differ in all, and
    the tool messages that could not be replayed."""

    environment: str
    groups: dict[str, list[int]]
    shown: list[ReplayedCall]
    differing: int
    problems: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return sum(n for n, _ in self.groups.values())


def recorded_calls(record: EpisodeRecord) -> tuple[list[RecordedCall], list[str]]:
    """The record's tool calls with their recorded observations, and the tool messages that answer none.

    A tool message answers the first call of the assistant message before it that has its ``tool_call_id``;
    the tools offered are the record's (the contract's three when it recorded none)."""
    offered = tuple(_function(s).get("name", "") for s in record.tools or []) or TOOL_NAMES
    pending: list[dict[str, Any]] = []
    calls, problems = [], []
    for i, message in enumerate(record.messages):
        if message.get("role") == "assistant":
            pending = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            j = next((j for j, c in enumerate(pending) if c.get("id") == call_id), None)
            content = message.get("content")
            if j is None or not isinstance(content, str):
                why = "no recorded call has its id" if j is None else "its content is not text"
                problems.append(f"{record.dataset}/{record.id} message {i} ({call_id!r}): {why}")
                continue
            function = _function(pending.pop(j))
            name = str(function.get("name") or "").strip()
            arguments = function.get("arguments") or "{}"
            arguments = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            calls.append(RecordedCall(record.dataset, record.id, i, name, arguments, content, offered))
    return calls, problems


def _function(call: Any) -> dict[str, Any]:
    """A tool call's or schema's ``function`` object ({} when it has none)."""
    function = call.get("function") if isinstance(call, dict) else None
    return function if isinstance(function, dict) else {}


def open_environment(env: str, token: str | None = None) -> Any:
    """The tools of ``env``: a running ``sws serve`` at an http(s) URL, else an index directory opened here.

    Raises:
        ReplayError: the index does not open.
    """
    from sws.index import SwsIndexError
    from sws.transport import make_tool_client

    if env.startswith(("http://", "https://")):
        return make_tool_client("http", url=env, token=token)
    if not Path(env).is_dir():
        raise ReplayError(f"--replay {env}: neither an http(s) URL nor an index directory")
    try:
        return make_tool_client("inprocess", index=env)
    except SwsIndexError as exc:
        raise ReplayError(f"--replay {env}: {exc}") from exc


def replay_calls(
    records: Iterable[EpisodeRecord], tools: Any, environment: str, show: int = 5
) -> ReplayResult:
    """Issue every recorded call of ``records`` against ``tools`` and diff the observations.

    Raises:
        ReplayError: the environment failed (``FatalToolError``: unreachable, refused, a backend failure).
    """
    calls, problems = [], []
    for record in records:
        found, bad = recorded_calls(record)
        calls += found
        problems += bad
    try:
        replayed = asyncio.run(_replay_all(calls, tools))
    except FatalToolError as exc:
        raise ReplayError(f"replay against {environment} failed: {exc}") from exc
    groups: dict[str, list[int]] = {}
    for r in replayed:
        counts = groups.setdefault(r.call.group, [0, 0])
        counts[0] += 1
        counts[1] += r.identical
    differing = [r for r in replayed if not r.identical]
    return ReplayResult(environment, dict(sorted(groups.items())), differing[:show], len(differing), problems)


async def _replay_all(calls: list[RecordedCall], tools: Any) -> list[ReplayedCall]:
    from sws.agent.tools import ToolRunner

    limit = asyncio.Semaphore(CONCURRENCY)
    runners: dict[tuple[str, ...], ToolRunner] = {}

    async def one(call: RecordedCall) -> ReplayedCall:
        runner = runners.setdefault(call.offered, ToolRunner(tools, call.offered))
        async with limit:
            return ReplayedCall(call, await runner.run(call.tool, call.arguments))

    tasks = [asyncio.ensure_future(one(c)) for c in calls]
    try:
        return list(await asyncio.gather(*tasks))
    finally:  # after a failure, the calls still running are cancelled before the sessions close
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if hasattr(tools, "aclose"):  # the HTTP client's sessions belong to this event loop
            await tools.aclose()
