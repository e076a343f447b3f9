"""The actor LLM for real: ``serve/llm.py``'s app on Ray Serve LLM with vLLM's CPU engine (the ``llm-cpu``
extra), serving the tiny random-weight Qwen3 (the real tokenizer and chat template) in eager mode on the
session's local Ray, behind ``/llm/v1`` on 127.0.0.1. Started once for the module (about 1.5 minutes)."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from serve.launch import free_port
from serve.llm import build_app, llm_config, served_name
from sws.config import LLMServeConfig
from sws.env import tool_schemas

pytestmark = [pytest.mark.llm, pytest.mark.ray]

MAX_MODEL_LEN = 4096
# the output the structured-output constraint allows: one search call in the chat template's JSON form
SEARCH_CALL = r'<tool_call>\n\{"name": "search", "arguments": \{"query": "[a-z]{1,12}"\}\}\n</tool_call>'


@pytest.fixture(scope="module")
def tiny_llm(ray_local, tiny_qwen3_dir, serve_index):
    """``(base_url, model, client)`` of the served tiny model; the app and Serve are gone after the module.
    The episode's index is built first: the engine and the ingress then hold the local Ray's 2 CPUs."""
    from openai import OpenAI
    from ray import serve

    cfg = LLMServeConfig(
        model=str(tiny_qwen3_dir),
        device="cpu",
        max_model_len=MAX_MODEL_LEN,
        cpu_kv_cache_gib=1,
        enforce_eager=True,
        max_num_seqs=8,
    )
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        serve.run(build_app(cfg), name=cfg.app_name, route_prefix="/llm")  # returns once the app is running
        url = f"http://127.0.0.1:{port}/llm/v1"
        yield url, served_name(cfg), OpenAI(base_url=url, api_key="EMPTY", timeout=300, max_retries=0)
    finally:
        serve.shutdown()


def test_the_app_is_the_cpu_engine_with_the_templates_parser(tiny_llm, tiny_qwen3_dir):
    _, model, client = tiny_llm
    engine = llm_config({"model": str(tiny_qwen3_dir), "device": "cpu"})["engine_kwargs"]
    assert engine["tool_call_parser"] == "hermes"  # plain Qwen3's template writes JSON tool calls
    assert [m.id for m in client.models.list().data] == [model]


def test_a_search_call_pinned_by_structured_output_comes_back_as_tool_calls(tiny_llm, tiny_qwen3_dir):
    from transformers import AutoTokenizer

    _, model, client = tiny_llm
    messages = [{"role": "user", "content": "Who directed the film Actrius?"}]
    reply = client.chat.completions.create(
        model=model,
        messages=messages,
        tools=tool_schemas(),
        max_completion_tokens=256,  # the constraint admits any spelling of its fixed text, one token a byte too
        seed=0,
        # thinking off: the qwen3 reasoning parser lets the constraint start after </think>, which the
        # template then writes into the prompt (a random model would never write it)
        extra_body={
            "structured_outputs": {"regex": SEARCH_CALL},
            "chat_template_kwargs": {"enable_thinking": False},
        },
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and not choice.message.content, choice
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "search"
    assert re.fullmatch(r"[a-z]{1,12}", json.loads(call.function.arguments)["query"])
    rendered = AutoTokenizer.from_pretrained(tiny_qwen3_dir).apply_chat_template(
        messages, tools=tool_schemas(), add_generation_prompt=True, enable_thinking=False, return_dict=True
    )
    assert reply.usage.prompt_tokens == len(rendered["input_ids"])  # the engine's count of the real prompt


def test_seeded_long_concurrent_requests_leave_the_engine_serving(tiny_llm):
    """vLLM-CPU's engine died on a seeded, uncached prompt over 2,048 tokens batched beside another running
    request when prefill was chunked (``serve.llm.cpu_engine_settings``); every later request got 500."""
    _, model, client = tiny_llm

    def long_seeded(i: int) -> tuple[int, str]:
        words = " ".join(f"w{i}x{j}" for j in range(450))  # ~2,600 tokens, distinct per request: none cached
        reply = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"Request {i}: {words}"}],
            max_completion_tokens=16 + 8 * i,  # some still decode while others prefill
            seed=1000 + i,
        )
        return reply.usage.prompt_tokens, reply.choices[0].finish_reason

    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(long_seeded, range(4)))
    assert all(2048 < tokens < MAX_MODEL_LEN for tokens, _ in done), done
    after = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Still there?"}], max_completion_tokens=4, seed=7
    )
    assert after.usage.completion_tokens >= 1


def test_a_prompt_over_max_model_len_is_the_context_exhausted_refusal(tiny_llm):
    """Ray Serve LLM passes vLLM's 400 on (its own wrapping around vLLM's text): the agent's endpoint raises
    ``ContextExhaustedError``, which ends an episode as ``context_exhausted``, after one request."""
    import asyncio

    from sws.agent import ContextExhaustedError, LLMEndpoint

    url, model, _ = tiny_llm
    words = " ".join(f"v{j}" for j in range(1800))  # ~5,400 tokens: over the 4,096 of the context

    async def ask():
        endpoint = LLMEndpoint(url, timeout=300, max_attempts=3)
        try:
            await endpoint.chat({"model": model, "messages": [{"role": "user", "content": words}]})
        finally:
            await endpoint.close()

    with pytest.raises(ContextExhaustedError, match=f"maximum context length is {MAX_MODEL_LEN} tokens"):
        asyncio.run(ask())


def test_an_eval_episode_is_recorded_with_the_engines_token_usage(
    tiny_llm, serve_index, tiny_qwen3_dir, tmp_path
):
    """One ``sws.eval`` episode end to end (a Ray worker, the real tools over the serve index, the Parquet
    record): the random model never calls a tool, so it ends at the round limit after a nudge."""
    from transformers import AutoTokenizer

    from sws.agent import AgentConfig, system_prompt
    from sws.eval import QAItem
    from sws.eval.results import load_table
    from sws.eval.runner import run_evaluation
    from sws.transport import tool_client_factory

    url, model, _ = tiny_llm
    config = AgentConfig(model=model, max_round=2, max_completion_tokens=32)
    item = QAItem("a0", "Who directed the film Actrius?", "Ventura Pons", (), "default", "Bamboogle")
    summary = run_evaluation(
        [item],
        tmp_path,
        config=config,
        llm={"base_url": url, "max_concurrency": 2, "timeout": 300},
        tools_factory=tool_client_factory("inprocess", index=str(serve_index)),
        fingerprint="tiny-qwen3",
        dataset="Bamboogle",
        workers=1,
        worker_num_cpus=0,  # the engine and the ingress hold the local Ray's 2 CPUs
        progress=False,
    )
    (row,) = load_table(tmp_path).to_pylist()
    assert (summary.recorded, summary.errored, summary.missing) == (1, 0, []), row["error"]
    assert (row["status"], row["rounds"], row["nudges"], row["model"]) == ("max_rounds", 2, 2, model)
    first_prompt = AutoTokenizer.from_pretrained(tiny_qwen3_dir).apply_chat_template(
        [
            {
                "role": "system",
                "content": system_prompt(config.keep_recent_tool_results, config.tool_result_max_chars),
            },
            {"role": "user", "content": item.question},
        ],
        tools=json.loads(row["tools"]),
        add_generation_prompt=True,
        return_dict=True,
    )["input_ids"]
    assert row["prompt_tokens"] > 2 * len(first_prompt)  # round 2 sends round 1's prompt and more
    assert 2 <= row["completion_tokens"] <= 2 * config.max_completion_tokens
    assert row["total_tokens"] == row["prompt_tokens"] + row["completion_tokens"]


def test_the_judge_runs_on_the_served_model(tiny_llm, tmp_path):
    import asyncio

    from sws.eval.judge import LLMJudge, parse_verdict

    url, model, _ = tiny_llm

    async def verdict():
        judge = LLMJudge(model=model, base_url=url, cache_dir=tmp_path, timeout=300, max_attempts=1)
        try:
            return await judge.judge("Who directed the film Actrius?", "Ventura Pons", (), "Pedro Almodovar")
        finally:
            await judge.close()

    result = asyncio.run(verdict())
    assert result.source == "api" and result.raw is not None  # answered: a failed call leaves raw None
    assert result.verdict == parse_verdict(result.raw)  # a random model's text (here none) is no verdict
    assert [p.read_text() for p in tmp_path.iterdir()] == [result.raw]  # cached
