"""A fourth tool, registered here and nowhere else: ``/tools``, ``/call``, MCP, the agent, the record counters
and the UI all answer it (the real HTTP app served by uvicorn on 127.0.0.1 over the leads index, no Ray); the
model's default tool list stays the contract's three, and the registration is undone after each test."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from serve.retrieval.http_app import make_http_app
from serve.retrieval.mcp_endpoint import make_mcp
from serve.retrieval.service import RetrievalService
from sws.agent import AgentConfig, LLMEndpoint, SearchAgent
from sws.agent.scripted_server import ScriptedLLMServer
from sws.env import (
    TOOL_NAMES,
    Tool,
    ToolOptions,
    WikiTools,
    function_schema,
    register_tool,
    registered_tools,
    tool_schemas,
    unregister_tool,
)
from sws.eval import QAItem
from sws.eval.records import EpisodeRecord
from sws.eval.results import PartWriter, prepare_run
from sws.transport import HttpTools
from sws.ui import create_app
from tests.ui.helpers import ServedApp


@dataclass(frozen=True, slots=True)
class EchoArgs:
    text: str

    @classmethod
    def parse(cls, raw: dict[str, Any], options: ToolOptions) -> EchoArgs:
        if not isinstance(raw.get("text"), str):
            raise TypeError("text must be a string")
        return cls(raw["text"])


def echo_schema(options: ToolOptions) -> dict[str, Any]:
    return function_schema(
        "echo",
        "Repeat the text back.",
        {"text": {"type": "string", "description": "What to repeat."}},
        ["text"],
    )


ECHO = Tool("echo", echo_schema, EchoArgs, lambda backend, args: f"echo: {args.text}")
SCHEMA = echo_schema(ToolOptions())
ERROR = (
    '{"status": "error", "tool": "echo", "arguments": "{\\"text\\": 5}", "error_type": "TypeError", '
    '"error": "text must be a string", "hint": "Fix tool arguments and call tool again. For search, provide '
    "non-empty 'query'.\"}"
)


@pytest.fixture(scope="module")
def engine(leads_root):
    from sws.search import SearchEngine

    return SearchEngine.open(leads_root / "index")


@pytest.fixture
def echo():
    register_tool(ECHO)
    try:
        yield ECHO
    finally:
        unregister_tool("echo")


@pytest.fixture
def served(engine, echo):
    """The retrieval service's HTTP app with MCP, made after the registration; its URL."""
    service = RetrievalService(engine)
    try:
        with ServedApp(make_http_app(service, mcp=make_mcp(service)), lifespan="on") as app:
            yield app.url
    finally:
        service.close()


async def _mcp(url: str) -> tuple[list[tuple[str, str]], list[str]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=60) as http_client,
        Client(streamable_http_client(f"{url}/mcp", http_client=http_client), mode="legacy") as client,
    ):
        listed = await client.list_tools()
        result = await client.call_tool("echo", {"text": "over MCP"})
    return [(t.name, t.description) for t in listed.tools], [c.text for c in result.content]


def test_tools_call_and_mcp_answer_the_registered_tool(served):
    tools = httpx.get(f"{served}/tools").json()["tools"]
    assert tools == [*tool_schemas(), SCHEMA]
    call = {"name": "echo", "arguments": json.dumps({"text": "hi"})}
    assert httpx.post(f"{served}/call", json=call).json() == {"content": "echo: hi"}
    call = {"name": "echo", "arguments": json.dumps({"text": 5})}
    assert httpx.post(f"{served}/call", json=call).json() == {"content": ERROR}
    listed, text = asyncio.run(_mcp(served))
    assert listed == [
        ("search", tools[0]["function"]["description"]),
        ("open_url", tools[1]["function"]["description"]),
        ("echo", "Repeat the text back."),
    ]
    assert text == ["echo: over MCP"]


def test_the_agent_records_and_ui_answer_the_registered_tool(served, engine, tmp_path):
    script = [
        {"tool_calls": [["echo", {"text": "ping"}], ["browse", {}]]},
        {"tool_calls": [["submit_answer", {"answer": "ping"}]]},
    ]
    config = AgentConfig(model="echo-model")
    item = QAItem("e1", "Say ping?", "ping", (), "default", "Bamboogle")

    async def episode(url):
        llm, tools = LLMEndpoint(url), HttpTools(served)
        agent = SearchAgent(llm, tools, config, schemas=[*tool_schemas(), SCHEMA])
        default = SearchAgent(llm, tools, config).schemas
        try:
            return await agent.run(item.question), agent.schemas, default
        finally:
            await llm.close()
            tools.close()

    with ScriptedLLMServer(script=script) as llm:
        ep, offered, default = asyncio.run(episode(llm.url))
        sent = llm.requests[0]["tools"]
    assert default == tool_schemas() and [s["function"]["name"] for s in default] == list(TOOL_NAMES)
    assert sent == offered == [*tool_schemas(), SCHEMA]
    assert [m["content"] for m in ep.messages if m.get("name") == "echo"] == ["echo: ping"]
    assert ep.predicted_answer == "ping"

    record = EpisodeRecord.from_episode(item, 0, ep, config, offered, "fp")
    assert (record.search_calls, record.submit_calls, record.unknown_tool_calls) == (0, 1, 1)  # browse
    assert record.tools[-1] == SCHEMA
    out = tmp_path / "run"
    prepare_run(out, {"dataset": "Bamboogle", "model": config.model, "agent_config": config.to_dict(),
                      "fingerprint": "fp", "items": 1})  # fmt: skip
    writer = PartWriter(out, "echo-w0")
    writer.add(record)
    writer.flush()

    app = create_app(run_dirs=[out], tools=WikiTools(engine))
    with TestClient(app) as client:
        form = client.get("/call").text
        assert re.search(r'<option value="echo"\s*>echo</option>', form) and "Repeat the text back." in form
        page = client.get("/call", params={"name": "echo", "arguments": '{"text": "from the UI"}'}).text
        assert '<pre class="text observation-text">echo: from the UI</pre>' in page
        key = app.state.runs.runs[0].key
        episode_page = client.get(f"/runs/{key}/episode", params={"id": "e1"}).text
    link = re.search(r'<a class="playground-link" href="([^"]+)">call in playground</a>', episode_page)
    assert link and link.group(1).replace("&amp;", "&") == (
        "/call?name=echo&arguments=%7B%22text%22%3A+%22ping%22%7D"
    )


def test_the_registration_is_undone(engine):
    assert list(registered_tools()) == list(TOOL_NAMES)
    observation = json.loads(WikiTools(engine).call_tool("echo", '{"text": "hi"}'))
    assert observation["error"] == "Unknown tool: echo"
