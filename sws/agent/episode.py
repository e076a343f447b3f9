"""One agent episode: the round loop of CONTRACT.md §6.2-§6.6 over an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from sws.agent.family import extra_body, model_family, rewrite_request_messages, valid_tool_name
from sws.agent.history import compress_history
from sws.agent.llm import ContextExhaustedError, LLMEndpoint
from sws.agent.prompts import INVALID_TOOL_NAME_NOTICE, nudge_message, round_budget_message, system_prompt
from sws.agent.tools import ToolBox, ToolRunner
from sws.config.agent import AgentConfig
from sws.env import tool_schemas

STOP_SUBMITTED = "Tool submitted final answer"
STOP_MAX_ROUNDS = "Max round num reached"
STOP_CONTEXT_EXHAUSTED = "Context length exhausted"


@dataclass(slots=True)
class Episode:
    """What one episode did: the full untruncated history, the answer, and counts for the statistics.

    ``status`` is ``submitted``, ``max_rounds``, ``context_exhausted`` (the history outgrew the model's
    context: a defined outcome with no answer, the endpoint's refusal in ``error``) or ``error`` (then
    ``error_type`` / ``error`` say why, and ``stop_reason`` is None). ``rounds`` counts LLM calls; tool counts
    are over the calls kept after the cap.
    """

    messages: list[dict[str, Any]]
    predicted_answer: str = ""
    stop_reason: str | None = None
    status: str = "error"
    error_type: str | None = None
    error: str | None = None
    time_cost: float = 0.0
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    )
    rounds: int = 0
    tool_calls: Counter = field(default_factory=Counter)
    tool_errors: int = 0
    dropped_tool_calls: int = 0
    nudges: int = 0
    llm_time_s: float = 0.0
    tool_time_s: float = 0.0
    llm_retries: int = 0
    seed: int = 0


class SearchAgent:
    """Runs episodes against one LLM endpoint and one tools object; many episodes may run at once.

    Args:
        llm: the chat endpoint (it holds the concurrency limit).
        tools: the tools object (``call_tool(name, arguments_json) -> str``).
        config: model and sampling settings (its ``model`` set).
        schemas: tool schemas sent on every call; None means ``tools.schemas`` if it has them, else
            ``sws.env.tool_schemas()``.
        tool_timeout: one deadline per tool call, the tools' retries included (``ToolRunner``); None: the
            tools' own.
        executor: thread pool for sync tools; None means the event loop's default.
    """

    def __init__(
        self,
        llm: LLMEndpoint,
        tools: ToolBox,
        config: AgentConfig,
        schemas: list[dict[str, Any]] | None = None,
        tool_timeout: float | None = None,
        executor: Executor | None = None,
    ):
        if not config.model:
            raise ValueError(f"config.model is needed (the model to ask): {config}")
        self.llm = llm
        self.config = config
        self.schemas = schemas or getattr(tools, "schemas", None) or tool_schemas()
        names = [s["function"]["name"] for s in self.schemas]
        self.tools = ToolRunner(tools, names, tool_timeout, executor=executor)
        self.family = model_family(config.model)
        self.system_prompt = system_prompt(config.keep_recent_tool_results, config.tool_result_max_chars)

    async def run(self, question: str, index: int = 0) -> Episode:
        """One episode for ``question``; ``index`` (the item's position) sets the seed ``config.seed + index``.

        Never raises for LLM or tool failures: they end the episode with status ``error``, a prompt over the
        model's context with ``context_exhausted``.
        """
        cfg = self.config
        ep = Episode(
            messages=[
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": question.strip()},
            ],
            seed=cfg.seed + index,
        )
        start = time.perf_counter()
        try:
            await self._loop(ep)
        except ContextExhaustedError as exc:
            ep.status, ep.stop_reason, ep.predicted_answer = "context_exhausted", STOP_CONTEXT_EXHAUSTED, ""
            ep.error_type, ep.error = type(exc).__name__, str(exc)
        except Exception as exc:  # noqa: BLE001 - a failed episode is recorded with its error, never lost
            ep.status, ep.stop_reason, ep.predicted_answer = "error", None, ""
            ep.error_type, ep.error = type(exc).__name__, str(exc)
        ep.time_cost = time.perf_counter() - start
        return ep

    async def _loop(self, ep: Episode) -> None:
        cfg = self.config
        seed = ep.seed
        reminder_round = (
            int(cfg.max_round * 0.8) if cfg.round_budget_reminder and cfg.max_round >= 5 else None
        )
        for round_id in range(cfg.max_round):
            if round_id == reminder_round:
                self._add_reminder(ep.messages, round_id)
            message = await self._llm_step(ep, seed)
            seed += 1
            calls = self._kept_tool_calls(ep, message)
            if not calls:
                ep.messages.append({"role": "user", "content": nudge_message(message.get("content"))})
                ep.nudges += 1
                continue
            answer = await self._run_tools(ep, calls)
            if answer is not None:
                ep.predicted_answer, ep.stop_reason, ep.status = answer, STOP_SUBMITTED, "submitted"
                return
        ep.predicted_answer, ep.stop_reason, ep.status = "", STOP_MAX_ROUNDS, "max_rounds"

    def _add_reminder(self, messages: list[dict[str, Any]], round_id: int) -> None:
        text = round_budget_message(round_id, self.config.max_round)
        if self.family == "mistral" and messages[-1].get("role") == "tool":
            messages[-1]["content"] = f"{messages[-1]['content']}\n\n{text}"
        else:
            messages.append({"role": "user", "content": text})

    async def _llm_step(self, ep: Episode, seed: int) -> dict[str, Any]:
        cfg = self.config
        request = compress_history(ep.messages, cfg.keep_recent_tool_results, cfg.tool_result_max_chars)
        body = {
            "model": cfg.model,
            "messages": rewrite_request_messages(request, self.family),
            "tools": self.schemas,
            "tool_choice": cfg.tool_choice,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_completion_tokens": cfg.max_completion_tokens,
            "seed": seed,
            "n": 1,
            "logprobs": False,
            **(extra_body(self.family) or {}),
        }
        t0 = time.perf_counter()
        call = await self.llm.chat(body)
        duration = time.perf_counter() - t0
        message = json.loads(call.response.choices[0].message.model_dump_json())
        message["duration_s"] = round(duration, 3)
        ep.messages.append(message)
        ep.rounds += 1
        ep.llm_time_s += duration
        ep.llm_retries += call.attempts - 1
        usage = call.response.usage
        if usage is not None:
            for key in ep.usage:
                ep.usage[key] += getattr(usage, key, 0) or 0
        return message

    def _kept_tool_calls(self, ep: Episode, message: dict[str, Any]) -> list[dict[str, Any]]:
        """Apply the per-step cap (and Mistral's name validator) to the stored assistant message."""
        calls = message.get("tool_calls") or []
        cap = self.config.max_tool_calls_per_step
        if len(calls) > cap:
            ep.dropped_tool_calls += len(calls) - cap
            calls = message["tool_calls"] = calls[:cap]
        if self.family == "mistral":
            bad = [c for c in calls if not valid_tool_name(_call_name(c))]
            if bad:
                calls = [c for c in calls if c not in bad]
                message["tool_calls"] = calls or None
                notices = "\n".join(INVALID_TOOL_NAME_NOTICE.format(name=_call_name(c)) for c in bad)
                message["content"] = (
                    f"{message['content']}\n\n{notices}" if message.get("content") else notices
                )
        return calls

    async def _run_tools(self, ep: Episode, calls: list[dict[str, Any]]) -> str | None:
        """Run one step's calls in parallel, append results in call order; the answer if one submitted."""
        named = [(c, _call_name(c), (c.get("function") or {}).get("arguments") or "{}") for c in calls]
        ep.tool_calls.update(name for _, name, _ in named)
        t0 = time.perf_counter()
        results = await asyncio.gather(*(self._timed_call(name, args) for _, name, args in named))
        ep.tool_time_s += time.perf_counter() - t0
        for (call, name, _), (output, duration) in zip(named, results):
            ep.messages.append(
                {
                    "tool_call_id": call.get("id"),
                    "role": "tool",
                    "name": name,
                    "content": output,
                    "duration_s": duration,
                }
            )
            parsed = _json_object(output)
            if parsed.get("status") == "error":
                ep.tool_errors += 1
            if parsed.get("status") == "done":
                answer = parsed.get("answer")
                return "" if answer is None else str(answer)
        return None

    async def _timed_call(self, name: str, arguments: str) -> tuple[str, float]:
        t0 = time.perf_counter()
        output = await self.tools.run(name, arguments)
        return output, round(time.perf_counter() - t0, 3)


def _call_name(call: dict[str, Any]) -> str:
    return str((call.get("function") or {}).get("name") or "").strip()


def _json_object(text: str) -> dict[str, Any]:
    if not text.lstrip().startswith("{"):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
