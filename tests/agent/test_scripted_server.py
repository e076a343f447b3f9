"""The scripted OpenAI-compatible server: wire format, policies, faults, the heuristic baseline, the CLI."""

import json

import httpx
import pytest
from click.testing import CliRunner
from openai.types.chat import ChatCompletion

from sws.agent import HEURISTIC_MODEL, POLICIES, heuristic_answer
from sws.agent.scripted_server import Faults, ScriptedLLMServer, main


def post(server, body):
    return httpx.post(f"{server.url}/chat/completions", json=body, timeout=5)


def test_wire_format(server):
    body = {"model": "too_many_calls", "messages": [{"role": "user", "content": "Q"}], "seed": 7}
    response = post(server, body)
    assert response.status_code == 200
    completion = ChatCompletion.model_validate(response.json())  # the SDK's own model accepts it
    choice = completion.choices[0]
    assert (completion.object, choice.finish_reason, choice.message.role) == (
        "chat.completion",
        "tool_calls",
        "assistant",
    )
    assert len(choice.message.tool_calls) == 7
    call = choice.message.tool_calls[0]
    assert (call.type, call.function.name, json.loads(call.function.arguments)) == (
        "function",
        "search",
        {"query": "Q 0"},
    )
    assert len({c.id for c in choice.message.tool_calls}) == 7
    assert (
        completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert server.requests == [body]

    text = ChatCompletion.model_validate(post(server, {**body, "model": "no_tool_call"}).json()).choices[0]
    assert (text.finish_reason, text.message.tool_calls, bool(text.message.content)) == ("stop", None, True)

    models = httpx.get(f"{server.url}/models").json()["data"]
    assert {m["id"] for m in models} == {*POLICIES, HEURISTIC_MODEL}
    assert httpx.get(f"http://{server.host}:{server.port}/health").json() == {"status": "ok"}


def test_policy_by_model_name_else_default(server):
    msgs = [{"role": "user", "content": "Q"}]
    unknown = post(server, {"model": "Qwen3.5-9B", "messages": msgs}).json()
    assert unknown["model"] == "Qwen3.5-9B"
    assert unknown["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "search"  # server default
    heuristic = post(server, {"model": "heuristic", "messages": msgs}).json()
    assert heuristic["model"] == HEURISTIC_MODEL  # labelled as the no-LLM baseline whichever way it is chosen


def test_faults():
    with ScriptedLLMServer(
        faults=Faults(error_rate=0.5, rate_limit_rate=0.25, seed=3), record_requests=False
    ) as server:
        codes = [post(server, {"model": "m", "messages": []}).status_code for _ in range(40)]
        stats = dict(server.llm.stats)
    assert set(codes) <= {200, 429, 500, 502, 503}
    assert codes.count(429) == stats["rate_limited"] > 0
    assert sum(c >= 500 for c in codes) == stats["errors"] > 0
    assert server.requests == []
    with (
        ScriptedLLMServer(faults=Faults(timeout_rate=1.0, hang_s=5)) as server,
        pytest.raises(httpx.ReadTimeout),
    ):
        httpx.post(f"{server.url}/chat/completions", json={"messages": []}, timeout=0.2)
    with pytest.raises(ValueError, match="add up"):
        Faults(error_rate=0.6, timeout_rate=0.6)
    with pytest.raises(ValueError, match="unknown policy"):
        ScriptedLLMServer(policy="oracle")


@pytest.mark.parametrize(
    ("question", "page", "answer"),
    [
        ("Were both films released in 1999?", "", "yes"),
        (
            "When was Albert Einstein born?",
            "# Albert Einstein (chunk 1/3)\n\nAlbert Einstein (14 March 1879 – 1955)",
            "14 March 1879",
        ),
        ("What year did the war end?", "The war ended in 1918 after four years.", "1918"),
        ("How many moons does Mars have?", "Mars has 2 moons, Phobos and Deimos.", "2"),
        (
            "Who directed the film Polish-Russian War?",
            (
                "# Polish-Russian War (ID: 5)\n\nPolish-Russian War is a 2009 film directed by Xawery Żuławski. "
                "Xawery Żuławski based it on a novel."
            ),
            "Xawery Żuławski",
        ),
        ("Who?", "# Only A Title (ID: 1)\n\nthe end", "Only A Title"),
    ],
)
def test_heuristic_answer(question, page, answer):
    assert heuristic_answer(question, page) == answer


def test_heuristic_baseline_runs_the_loop(server, make_tools, run_episode):
    class PageTools(make_tools):
        def call_tool(self, name, arguments_json):
            super().call_tool(name, arguments_json)
            if name == "open_url":
                return "# Hamlet (chunk 1/4)\n\n## Section 0: Preamble\nHamlet is a tragedy written by William Shakespeare."
            return "1. [Hamlet](https://en.wikipedia.org/wiki/13#chunk-1)\n   - Hamlet is a tragedy"

    tools = PageTools()
    ep = run_episode(server.url, HEURISTIC_MODEL, "Who wrote Hamlet?", tools)
    assert [(n, json.loads(a)) for n, a in tools.calls] == [
        ("search", {"query": "Who wrote Hamlet?"}),
        ("open_url", {"url": "https://en.wikipedia.org/wiki/13#chunk-1"}),
    ]
    assert (ep.status, ep.predicted_answer, ep.rounds) == ("submitted", "William Shakespeare", 3)


def test_cli_help():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "no-LLM baseline" in result.output and "--error-rate" in result.output


def test_search_methods_searches_each_way_then_opens_the_first_hit(server, make_tools, run_episode):
    class SearchTools(make_tools):
        def call_tool(self, name, arguments_json):
            super().call_tool(name, arguments_json)
            if name == "open_url":
                return "# Hamlet (chunk 1/4)\n\nHamlet is a tragedy written by William Shakespeare."
            if json.loads(arguments_json).get("method") == "keywords":
                return "No results found."
            return "1. [Hamlet](https://en.wikipedia.org/wiki/13#chunk-1)\n   - Hamlet is a tragedy"

    tools = SearchTools()
    ep = run_episode(server.url, "search_methods", "Who wrote Hamlet?", tools)
    query = {"query": "Who wrote Hamlet?", "top_k": 3}
    assert [(n, json.loads(a)) for n, a in tools.calls] == [
        ("search", {**query, "method": "keywords"}),
        ("search", {**query, "method": "vector"}),
        ("search", {**query, "only_title": True}),
        ("open_url", {"url": "https://en.wikipedia.org/wiki/13#chunk-1"}),  # the first hit of any search
    ]
    assert (ep.status, ep.predicted_answer, ep.rounds) == ("submitted", "William Shakespeare", 5)

    class NoHits(make_tools):
        def call_tool(self, name, arguments_json):
            super().call_tool(name, arguments_json)
            return "No results found."

    no_hits = NoHits()
    empty = run_episode(server.url, "search_methods", "Who wrote Hamlet?", no_hits)
    assert [n for n, _ in no_hits.calls] == ["search"] * 3  # nothing to open
    assert (empty.status, empty.predicted_answer, empty.rounds) == ("submitted", "", 4)
