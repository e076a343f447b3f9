"""The agent's settings for small models, against the scripted server over real HTTP: ``tool_choice`` on every
request, and a history that outgrows the model's context (vLLM's 400, as the server plays it) ending the
episode as ``context_exhausted`` after one refused request."""

import pytest

from sws.agent import STOP_CONTEXT_EXHAUSTED, AgentConfig
from sws.agent.scripted_server import (
    Faults,
    ScriptedLLMServer,
    context_overflow_body,
    estimated_prompt_tokens,
)

FAST = {"backoff_s": 0.01, "backoff_max_s": 0.05}


def test_tool_choice_is_sent_every_round(server, tools, run_episode):
    ep = run_episode(server.url, "search_then_submit", "Q", tools, tool_choice="required")
    assert [body["tool_choice"] for body in server.requests] == ["required", "required"]
    assert ep.status == "submitted"
    with pytest.raises(ValueError, match="tool_choice='none'"):
        AgentConfig(model="m", tool_choice="none")


def test_a_history_over_the_context_ends_the_episode_unretried(run_episode, make_tools):
    # each search adds 1,200 characters (~300 estimated tokens): the 3rd request is over 1,000
    with ScriptedLLMServer(faults=Faults(max_model_len=1000)) as server:
        ep = run_episode(
            server.url, "never_submit", "Q", make_tools(size=1200), endpoint={"max_attempts": 4, **FAST}
        )
        stats, requests = dict(server.llm.stats), list(server.requests)
    sizes = [estimated_prompt_tokens(body["messages"]) for body in requests]
    assert len(sizes) == 3 and sizes[1] <= 1000 < sizes[2]
    assert stats["context_overflows"] == 1  # refused once, never retried
    assert (ep.status, ep.stop_reason, ep.predicted_answer) == (
        "context_exhausted",
        STOP_CONTEXT_EXHAUSTED,
        "",
    )
    assert (ep.rounds, ep.tool_calls["search"], ep.error_type) == (2, 2, "ContextExhaustedError")
    assert context_overflow_body(1000, sizes[2])["error"]["message"] in ep.error
    assert ep.usage["prompt_tokens"] == sum(sizes[:2])  # the answered rounds' usage is kept
