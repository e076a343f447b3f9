"""The tool client: config, in-process transport, HTTP statuses and retries (against a scripted server),
handle error classification, pickling, and what the agent's ToolRunner makes of each outcome."""

from __future__ import annotations

import asyncio
import json
import pickle
import threading
import time

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from serve.launch import free_port
from sws.agent import ToolRunner
from sws.agent.scripted_server import drip
from sws.config import ToolClientConfig
from sws.env import BackendFailure, FatalToolError, ToolRequestError, TransientToolError, WikiTools
from sws.retry import RetryPolicy
from sws.stages import tool_client_args
from sws.transport import HandleTools, HttpTools, InProcessTools, make_tool_client, tool_client_factory
from sws.transport.handle import _classify
from sws.transport.retries import call_with_retries
from tests.serve.cases import tool_cases

FAST = RetryPolicy(timeout_s=5, max_attempts=3, backoff_s=0.01, backoff_max_s=0.05)


class ScriptedToolServer:
    """``POST /call`` answers the next scripted ``(status, body, headers)``; the last one repeats. With
    ``drip_s`` the body trickles out a byte at a time, that many seconds apart."""

    def __init__(self):
        self.script: list[tuple[int, dict | str, dict]] = []
        self.requests: list[dict] = []
        self.drip_s = 0.0
        self.port = free_port()

        async def call(request: Request) -> Response:
            self.requests.append({"headers": dict(request.headers), "body": json.loads(await request.body())})
            status, body, headers = self.script.pop(0) if len(self.script) > 1 else self.script[0]
            if isinstance(body, str):
                return drip(Response(body, status, headers), self.drip_s)
            return drip(JSONResponse(body, status, headers), self.drip_s)

        config = uvicorn.Config(
            Starlette(routes=[Route("/call", call, methods=["POST"])]), port=self.port, log_level="error"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def scripted():
    with ScriptedToolServer() as server:
        yield server


def _both(tools, name="search", arguments='{"query": "x"}'):
    """The sync and the async call's outcome (result or exception type and text)."""
    outcomes = []
    for call in (
        lambda: tools.call_tool(name, arguments),
        lambda: asyncio.run(tools.acall_tool(name, arguments)),
    ):
        try:
            outcomes.append(("ok", call()))
        except Exception as exc:  # noqa: BLE001
            outcomes.append((type(exc).__name__, str(exc)))
    return outcomes


def test_http_retries_transient_statuses_then_answers(scripted):
    for transient in (503, 502, 500, 429):
        scripted.script = [
            (transient, "busy", {"retry-after": "0"}),
            (transient, {"error": {}}, {}),
            (200, {"content": "observation"}, {}),
        ]
        tools = HttpTools(scripted.url, token="tok", policy=FAST)
        assert tools.call_tool("search", '{"query": "x"}') == "observation"
        scripted.script = [(transient, "busy", {}), (200, {"content": "observation"}, {})]
        assert asyncio.run(tools.acall_tool("search", '{"query": "x"}')) == "observation"
    request = scripted.requests[-1]
    assert request["body"] == {"name": "search", "arguments": '{"query": "x"}'}
    assert request["headers"]["authorization"] == "Bearer tok"


def test_http_gives_up_with_fatal_tool_error(scripted):
    scripted.script = [(503, "Request dropped due to backpressure", {"retry-after": "0"})]
    for kind, message in _both(HttpTools(scripted.url, policy=FAST)):
        assert kind == "FatalToolError"
        assert "after 3 attempts" in message and "HTTP 503" in message and "backpressure" in message
    dead = HttpTools(f"http://127.0.0.1:{free_port()}", policy=FAST)  # nothing listens there
    for kind, message in _both(dead):
        assert kind == "FatalToolError" and "after 3 attempts" in message


@pytest.mark.timeout(60)  # a hang guard only: before the total deadline the sync call took 43 s
def test_http_answer_that_trickles_is_cut_at_the_deadline(scripted):
    scripted.drip_s = 0.2
    scripted.script = [(200, {"content": "x" * 200}, {})]
    policy = RetryPolicy(timeout_s=0.5, max_attempts=2, backoff_s=0.01, backoff_max_s=0.05)
    for kind, message in _both(HttpTools(scripted.url, policy=policy)):
        assert kind == "FatalToolError" and "after 2 attempts" in message
        assert message.endswith(f"no complete answer from {scripted.url} within 0.5 s")
    assert len(scripted.requests) == 4


def test_http_retry_after_beyond_the_backoff_cap_is_not_retried_sooner(scripted):
    scripted.script = [(503, "busy", {"retry-after": "60"})]
    for kind, message in _both(HttpTools(scripted.url, policy=FAST)):
        assert kind == "FatalToolError" and "HTTP 503" in message
        assert "asked to retry after 60 s, more than the backoff cap of 0.05 s" in message
    assert len(scripted.requests) == 2  # once per call


def test_http_input_rejections_and_misconfiguration(scripted):
    too_large = {
        "error": {"status": 413, "code": "body_too_large", "message": "request body of 70000 bytes ..."}
    }
    scripted.script = [(413, too_large, {})]
    for kind, message in _both(HttpTools(scripted.url, policy=FAST)):
        assert (kind, message) == ("ToolRequestError", "body_too_large: request body of 70000 bytes ...")
    assert len(scripted.requests) == 2  # not retried
    scripted.script = [
        (401, {"error": {"status": 401, "code": "unauthorized", "message": "missing token"}}, {})
    ]
    for kind, message in _both(HttpTools(scripted.url, policy=FAST)):
        assert kind == "FatalToolError" and "HTTP 401" in message


def test_tool_runner_sees_rejections_as_observations_and_outages_as_fatal(scripted):
    scripted.script = [(413, {"error": {"status": 413, "code": "body_too_large", "message": "too big"}}, {})]
    runner = ToolRunner(HttpTools(scripted.url, policy=FAST), ["search", "open_url", "submit_answer"])
    observation = json.loads(asyncio.run(runner.run("search", '{"query": "x"}')))
    assert observation["status"] == "error" and observation["error_type"] == "ToolRequestError"
    assert observation["error"] == "body_too_large: too big"
    scripted.script = [(503, "busy", {})]
    with pytest.raises(FatalToolError):
        asyncio.run(runner.run("search", '{"query": "x"}'))


def test_inprocess_client_equals_wikitools(serve_index, engine, local_tools):
    tools = make_tool_client("inprocess", index=str(serve_index))
    assert isinstance(tools, InProcessTools)
    for name, arguments in tool_cases(engine)[::3]:
        assert tools.call_tool(name, arguments) == local_tools.call_tool(name, arguments)
    arguments = json.dumps({"query": "Sudan", "method": "keywords", "top_k": 2})
    assert asyncio.run(tools.acall_tool("search", arguments)) == local_tools.call_tool("search", arguments)


def test_inprocess_backend_failure_is_fatal(engine):
    from tests.serve.test_service import _BrokenEngine

    tools = InProcessTools(WikiTools(_BrokenEngine(engine)))
    with pytest.raises(FatalToolError, match="OSError"):
        tools.call_tool("search", '{"query": "x"}')
    assert json.loads(tools.call_tool("search", '{"query": ""}'))["error"] == "query is empty"


def test_make_tool_client_config(monkeypatch, serve_index):
    monkeypatch.setenv("MY_TOKEN", "abc")
    cfg = ToolClientConfig(
        transport="http", url="http://h:1/", token_env="MY_TOKEN", timeout_s=3, max_attempts=5
    )
    http = make_tool_client(**tool_client_args(cfg))
    assert isinstance(http, HttpTools) and http.url == "http://h:1" and http.token == "abc"
    assert http.policy == RetryPolicy(3, 5, 0.5, 8.0)
    handle = make_tool_client("handle", app_name="wiki")
    assert isinstance(handle, HandleTools) and handle.app_name == "wiki"
    with pytest.raises(ValueError, match="transport"):
        make_tool_client("carrier-pigeon")
    with pytest.raises(ValueError, match="index"):
        make_tool_client("inprocess")
    with pytest.raises(ValueError, match="index"):
        tool_client_factory("inprocess")
    with pytest.raises(ValueError, match="max_attempts"):
        tool_client_args(ToolClientConfig(transport="http", max_attempts=0))
    args = tool_client_args(ToolClientConfig(), index=str(serve_index))
    factory = pickle.loads(pickle.dumps(tool_client_factory(**args)))
    assert isinstance(factory(), InProcessTools)


def test_clients_pickle_without_their_connections(scripted):
    scripted.script = [(200, {"content": "ok"}, {})]
    tools = HttpTools(scripted.url, policy=FAST)
    assert tools.call_tool("search", "{}") == "ok"
    copy = pickle.loads(pickle.dumps(tools))
    assert copy._client is None and copy.call_tool("search", "{}") == "ok"
    handle = HandleTools("sws", FAST)
    handle._handle = object()
    assert pickle.loads(pickle.dumps(handle))._handle is None


def test_handle_errors_classified():
    from ray.exceptions import ActorDiedError, GetTimeoutError
    from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError

    pressure = _classify(BackPressureError(num_queued_requests=9, max_queued_requests=8, retry_after_s=2.0))
    assert isinstance(pressure, TransientToolError) and pressure.retry_after_s == 2.0
    for exc in (
        ActorDiedError(),
        GetTimeoutError("late"),
        DeploymentUnavailableError("gone"),
        BackendFailure("embedder down"),
        TimeoutError(),
    ):
        assert isinstance(_classify(exc), TransientToolError), exc
    bug = KeyError("x")
    assert _classify(bug) is bug


def test_retry_policy():
    with pytest.raises(ValueError):
        RetryPolicy(timeout_s=0)
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    policy = RetryPolicy(backoff_s=1.0, backoff_max_s=4.0)
    for attempt in range(1, 8):
        assert 0 <= policy.delay(attempt) <= min(4.0, 2 ** (attempt - 1))
    assert policy.delay(1, retry_after_s=3.0) == 3.0
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise TransientToolError("again", retry_after_s=0)
        return "done"

    assert call_with_retries(RetryPolicy(max_attempts=3, backoff_s=0, backoff_max_s=0), "x", flaky) == "done"
    with pytest.raises(ToolRequestError):
        call_with_retries(RetryPolicy(), "x", lambda: (_ for _ in ()).throw(ToolRequestError("bad")))
