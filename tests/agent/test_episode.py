"""The round loop over real HTTP against the scripted server: every rule of CONTRACT.md §6.3-§6.6 in the
recorded requests and the saved history."""

import json
import re

import pytest

from sws.agent import (
    NUDGE_AFTER_EMPTY,
    NUDGE_AFTER_TEXT,
    STOP_MAX_ROUNDS,
    STOP_SUBMITTED,
    round_budget_message,
    system_prompt,
)
from sws.agent.scripted_server import ScriptedLLMServer
from sws.env import FatalToolError, ToolRequestError, TransientToolError, tool_schemas
from sws.retry import RetryPolicy
from sws.transport.retries import call_with_retries


def tool_messages(messages):
    return [m for m in messages if m["role"] == "tool"]


def error_obs(tool, arguments, error_type, error):
    return json.dumps(
        {
            "status": "error",
            "tool": tool,
            "arguments": arguments,
            "error_type": error_type,
            "error": error,
            "hint": "Fix tool arguments and call tool again. For search, provide non-empty 'query'.",
        },
        ensure_ascii=False,
    )


def test_prompts_sampling_and_seeds(server, tools, run_episode):
    ep = run_episode(server.url, "Qwen3.5-9B", "  Who wrote Hamlet?  \n", tools, index=7)
    first, second = server.requests
    assert first["messages"] == [
        {"role": "system", "content": system_prompt()},  # pinned in test_prompts.py
        {"role": "user", "content": "Who wrote Hamlet?"},  # the bare question, stripped
    ]
    for body in (first, second):
        assert body["tools"] == tool_schemas()
        assert (body["tool_choice"], body["temperature"], body["top_p"]) == ("auto", 0.7, 0.95)
        assert (body["max_completion_tokens"], body["n"], body["logprobs"]) == (1024, 1, False)
        assert "chat_template_kwargs" not in body
    assert [first["seed"], second["seed"]] == [42 + 7, 42 + 7 + 1]  # 42 + index, +1 per call
    assert (ep.status, ep.stop_reason, ep.predicted_answer, ep.rounds) == (
        "submitted",
        STOP_SUBMITTED,
        "Paris",
        2,
    )
    assert ep.seed == 49
    assert ep.usage["total_tokens"] == ep.usage["prompt_tokens"] + ep.usage["completion_tokens"] > 0
    assert tools.calls == [("search", json.dumps({"query": "Who wrote Hamlet?"}))]
    # the saved history: assistant dumps with duration_s, tool messages with name and duration_s
    assistant, tool = ep.messages[2], ep.messages[3]
    assert {"content", "role", "tool_calls", "refusal", "annotations", "audio", "function_call"} <= set(
        assistant
    )
    assert isinstance(assistant["duration_s"], float)
    assert set(tool) == {"tool_call_id", "role", "name", "content", "duration_s"}
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    # history is sent as stored, non-standard keys included
    assert second["messages"] == json.loads(json.dumps(ep.messages[:4]))


def test_at_most_five_tool_calls_per_step(server, tools, run_episode):
    ep = run_episode(server.url, "too_many_calls", "Q", tools)
    step = ep.messages[2]
    assert len(step["tool_calls"]) == 5  # the stored assistant message is rewritten to the kept calls
    assert [json.loads(c["function"]["arguments"])["query"] for c in step["tool_calls"]] == [
        f"Q {i}" for i in range(5)
    ]
    assert sorted(json.loads(a)["query"] for _, a in tools.calls) == [f"Q {i}" for i in range(5)]
    sent = tool_messages(server.requests[1]["messages"])
    assert [m["tool_call_id"] for m in sent] == [c["id"] for c in step["tool_calls"]]  # call order, no notice
    assert server.requests[1]["messages"][2]["tool_calls"] == step["tool_calls"]
    assert (ep.dropped_tool_calls, ep.tool_calls["search"], ep.status) == (2, 5, "submitted")


def test_nudges_after_rounds_without_tool_calls(server, tools, run_episode):
    ep = run_episode(server.url, "no_tool_call", "Q", tools)
    assert len(server.requests) == 20  # a round without a tool call still counts
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": NUDGE_AFTER_TEXT}
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": NUDGE_AFTER_EMPTY}
    # the text reply's tool_calls: null is stored, and left out of the request (vLLM refuses it)
    assert ep.messages[2]["role"] == "assistant" and ep.messages[2]["tool_calls"] is None
    assert "tool_calls" not in server.requests[1]["messages"][2]
    assert server.requests[1]["messages"][2] == {k: v for k, v in ep.messages[2].items() if k != "tool_calls"}
    assert [m["content"] for m in ep.messages if m["role"] == "user"][1:4] == [
        NUDGE_AFTER_TEXT,
        NUDGE_AFTER_EMPTY,
        NUDGE_AFTER_TEXT,
    ]
    assert (ep.stop_reason, ep.predicted_answer, ep.nudges, ep.rounds, tools.calls) == (
        STOP_MAX_ROUNDS,
        "",
        20,
        20,
        [],
    )


def test_round_budget_reminder_before_call_17(server, tools, run_episode):
    ep = run_episode(server.url, "never_submit", "Q", tools)
    assert len(server.requests) == 20 and len(tools.calls) == 20
    for k, body in enumerate(server.requests):
        reminders = [m for m in body["messages"] if "[Round budget]" in str(m.get("content"))]
        assert len(reminders) == (k >= 16)
    assert server.requests[16]["messages"][-1] == {"role": "user", "content": round_budget_message(16, 20)}
    assert server.requests[16]["messages"][-2]["role"] == "tool"
    assert [m["content"] for m in ep.messages if m["role"] == "user"] == ["Q", round_budget_message(16, 20)]
    assert (ep.status, ep.stop_reason, ep.rounds) == ("max_rounds", STOP_MAX_ROUNDS, 20)


@pytest.mark.parametrize(("max_round", "reminder_at"), [(10, 8), (5, 4), (4, None)])
def test_reminder_threshold_follows_max_round(server, max_round, reminder_at, run_episode):
    run_episode(server.url, "never_submit", "Q", max_round=max_round)
    at = [
        k for k, b in enumerate(server.requests) if "[Round budget]" in str(b["messages"][-1].get("content"))
    ]
    assert at == ([] if reminder_at is None else [reminder_at])
    if reminder_at:
        assert f"used {reminder_at} of {max_round}" in server.requests[reminder_at]["messages"][-1]["content"]
    run_episode(server.url, "never_submit", "Q", max_round=20, round_budget_reminder=False)
    assert not any("[Round budget]" in json.dumps(b) for b in server.requests[max_round:])


def test_history_compression_in_requests_only(server, run_episode, make_tools):
    tools = make_tools(size=3000)
    ep = run_episode(server.url, "never_submit", "Q", tools, max_round=4)
    full = [m["content"] for m in tool_messages(ep.messages)]
    assert all(len(c) == 3000 for c in full)  # the saved history is untouched
    for k in range(1, 4):
        sent = [m["content"] for m in tool_messages(server.requests[k]["messages"])]
        assert sent[-1] == full[k - 1]  # the latest tool result whole
        assert sent[:-1] == [c[:2048] + "...[truncated 952 chars]" for c in full[: k - 1]]


def test_compression_counts_messages_not_steps(tools, run_episode, make_tools):
    step = {"content": "three at once", "tool_calls": [["search", {"query": q}] for q in "abc"]}
    with ScriptedLLMServer(script=[step, {"tool_calls": [["submit_answer", {"answer": "x"}]]}]) as server:
        run_episode(server.url, "m", "Q", make_tools(size=2500))
        sent = [m["content"] for m in tool_messages(server.requests[1]["messages"])]
    assert [s.endswith("...[truncated 452 chars]") for s in sent] == [True, True, False]


def test_submit_ends_episode_and_later_calls_are_not_recorded(tools, run_episode):
    step = {
        "tool_calls": [
            ["search", {"query": "before"}],
            ["submit_answer", {"answer": "Paris"}],
            ["open_url", {"url": "https://en.wikipedia.org/wiki/1"}],
        ]
    }
    with ScriptedLLMServer(script=[step]) as server:
        ep = run_episode(server.url, "m", "Q", tools)
        assert len(server.requests) == 1
    assert sorted(name for name, _ in tools.calls) == ["open_url", "search"]  # both ran (in parallel)
    assert [m["name"] for m in tool_messages(ep.messages)] == ["search", "submit_answer"]
    assert ep.messages[-1]["content"] == '{"status": "done", "answer": "Paris"}'
    assert (ep.predicted_answer, ep.stop_reason, ep.rounds) == ("Paris", STOP_SUBMITTED, 1)
    assert ep.tool_calls == {"search": 1, "submit_answer": 1, "open_url": 1}


@pytest.mark.parametrize(
    ("arguments", "answer"), [({"answer": None}, ""), ({}, ""), ({"answer": ""}, ""), ({"answer": 7}, "7")]
)
def test_empty_or_null_answer_is_accepted(arguments, answer, run_episode):
    with ScriptedLLMServer(script=[{"tool_calls": [["submit_answer", arguments]]}]) as server:
        ep = run_episode(server.url, "m", "Q")
    assert (ep.status, ep.predicted_answer, ep.rounds) == ("submitted", answer, 1)


def test_error_observations_reach_the_model(server, tools, run_episode):
    ep = run_episode(server.url, "malformed_arguments", "Q", tools)
    (bad,) = [m for m in tool_messages(ep.messages) if m["name"] == "search"]
    assert bad["content"] == error_obs(
        "search",
        '{"query": "unterminated',
        "JSONDecodeError",
        "Unterminated string starting at: line 1 column 11 (char 10)",
    )
    assert server.requests[1]["messages"][-1]["content"] == bad["content"]
    assert (ep.tool_errors, ep.status) == (1, "submitted")

    ep = run_episode(server.url, "unknown_tool", "Q", tools)
    assert tool_messages(ep.messages)[0]["content"] == error_obs(
        "browse", '{"url": "https://example.com"}', "ValueError", "Unknown tool: browse"
    )
    assert all(name != "browse" for name, _ in tools.calls)

    script = [
        {"tool_calls": [["submit_answer", "[1, 2]"]]},
        {"tool_calls": [["submit_answer", {"answer": "ok"}]]},
    ]
    with ScriptedLLMServer(script=script) as server2:
        ep = run_episode(server2.url, "m", "Q", tools)
    assert (
        json.loads(tool_messages(ep.messages)[0]["content"])["status"] == "error"
    )  # not an object: not accepted
    assert (ep.predicted_answer, ep.rounds) == ("ok", 2)


class RetriedTools:
    """Tools that retry as the remote clients do (``sws.transport``): the one retry layer of a tool call."""

    def __init__(self, tools, max_attempts=3):
        self.tools = tools
        self.policy = RetryPolicy(timeout_s=5, max_attempts=max_attempts, backoff_s=0.01, backoff_max_s=0.05)

    def call_tool(self, name, arguments_json):
        return call_with_retries(self.policy, name, lambda: self.tools.call_tool(name, arguments_json))


def test_tool_failures_transient_retried_fatal_recorded(server, run_episode, make_tools):
    tools = make_tools(fail={"search": [TransientToolError("busy"), TransientToolError("late"), None]})
    ep = run_episode(server.url, "search_then_submit", "Q", RetriedTools(tools))
    assert (ep.status, len(tools.calls)) == ("submitted", 3)

    rejected = ToolRequestError("query_too_long: query of 5000 characters")  # the service refused the input
    ep = run_episode(server.url, "search_then_submit", "Q", make_tools(fail={"search": [rejected]}))
    assert (ep.status, json.loads(tool_messages(ep.messages)[0]["content"])["error_type"]) == (
        "submitted",
        "ToolRequestError",
    )

    ep = run_episode(
        server.url, "search_then_submit", "Q", make_tools(fail={"search": [FatalToolError("index gone")]})
    )
    assert (ep.status, ep.error_type, ep.stop_reason, ep.predicted_answer) == (
        "error",
        "FatalToolError",
        None,
        "",
    )
    assert "index gone" in ep.error and ep.messages[-1]["role"] == "assistant"  # the partial history is kept

    down = TransientToolError("ConnectError: refused")
    tools = make_tools(fail={"search": [down] * 5})
    ep = run_episode(server.url, "search_then_submit", "Q", RetriedTools(tools))
    assert (ep.status, ep.error_type, len(tools.calls)) == ("error", "FatalToolError", 3)
    assert "still failing after 3 attempts: ConnectError" in ep.error

    tools = make_tools(fail={"search": [down] * 5})  # no retries of its own: not retried again by the runner
    ep = run_episode(server.url, "search_then_submit", "Q", tools)
    assert (ep.status, ep.error_type, len(tools.calls)) == ("error", "FatalToolError", 1)


def test_tool_timeout(server, run_episode, make_tools):
    class SlowTools(make_tools):
        def call_tool(self, name, arguments_json):
            import time

            time.sleep(0.3)
            return super().call_tool(name, arguments_json)

    tools = SlowTools()
    ep = run_episode(server.url, "search_then_submit", "Q", tools, agent={"tool_timeout": 0.05})
    assert (ep.status, ep.error_type) == ("error", "FatalToolError")
    assert "TimeoutError" in ep.error


def test_mistral_quirks(tools, run_episode):
    steps = [
        {"content": None, "tool_calls": [["search", {"query": "a"}], ["bad name!", {}]]},
        {"content": None, "tool_calls": [["search", {"query": "b"}]]},
    ]
    with ScriptedLLMServer(script=steps) as server:
        ep = run_episode(server.url, "Ministral-3-8B-Instruct-2512-BF16", "Q", tools, max_round=5)
        requests = server.requests
    first = ep.messages[2]
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["search"]
    assert first["content"] == (
        "[Invalid tool call rejected by serving validator]\n- Function name was bad name! but must be a-z, A-Z, 0-9, "
        "or contain underscores and dashes, with a maximum length of 64.\nFix the tool call and try again."
    )
    sent = requests[1]["messages"]
    (call,) = sent[2]["tool_calls"]
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", call["id"]) and sent[3]["tool_call_id"] == call["id"]
    assert call["id"] != first["tool_calls"][0]["id"]  # remapped in the request only
    assert all(m["content"] is not None for m in requests[2]["messages"])
    # the reminder (round 4 of 5) rides on the trailing tool message instead of a user message
    last = requests[4]["messages"][-1]
    assert last["role"] == "tool" and last["content"].endswith(
        "\n\n[Round budget] You have used 4 of 5 tool-calling rounds; only 1 round(s) remain. If you already have enough evidence, call the `submit_answer` tool with your final answer; otherwise prioritize decisive searches and submit before the budget runs out."
    )
    assert [m["role"] for m in ep.messages].count("user") == 1


def test_gemma_and_qwen_reasoning(tools, run_episode):
    with ScriptedLLMServer(policy="search_then_submit", reasoning_content=True) as server:
        ep = run_episode(server.url, "gemma-4-12B-it", "Q", tools)
        gemma = server.requests[:]
        run_episode(server.url, "Qwen3.5-4B", "Q", tools)
        qwen = server.requests[len(gemma) :]
    assert (
        ep.messages[2]["reasoning_content"] == "scripted reasoning for round 0"
    )  # saved as the server sent it
    assert gemma[0]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_content" not in gemma[1]["messages"][2]
    assert qwen[1]["messages"][2]["reasoning_content"] == "scripted reasoning for round 0"
    assert "chat_template_kwargs" not in qwen[0]
