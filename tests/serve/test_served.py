"""Real Ray Serve on 127.0.0.1 (``sws serve``: HAProxy ingress, 2 retrieval replicas, batched query
embeddings, bearer token) over the real-sample index: every endpoint, byte for byte against the in-process
tools; the MCP endpoint through the MCP client library; the handle API from a Ray task; bounds; bad input;
backpressure (queue, then 503 with Retry-After)."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest

from sws.env import WikiTools, tool_schemas
from sws.retry import RetryPolicy
from sws.transport import HttpTools
from tests.serve.cases import guarded_requests, opened, tool_cases
from tests.serve.conformance import check, conformance_rows, send
from tests.serve.conftest import TOKEN, run_driver
from tests.serve.counted_load import per_client, run_closed_loop, summary

pytestmark = pytest.mark.ray
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as client:
        yield client


def test_call_is_byte_identical_to_in_process(http, engine, local_tools):
    for name, arguments in tool_cases(engine):
        response = http.post("/call", json={"name": name, "arguments": arguments}, headers=AUTH)
        assert response.status_code == 200, (name, arguments, response.text)
        assert response.json()["content"] == local_tools.call_tool(name, arguments), (name, arguments)


def test_http_client_sync_and_async(server, engine, local_tools):
    tools = HttpTools(server.url, token=TOKEN, policy=RetryPolicy(timeout_s=60))
    cases = tool_cases(engine)
    for name, arguments in cases:
        assert tools.call_tool(name, arguments or "{}") == local_tools.call_tool(name, arguments)

    async def all_at_once():
        try:
            return await asyncio.gather(*(tools.acall_tool(n, a or "{}") for n, a in cases))
        finally:
            await tools.aclose()

    observations = asyncio.run(all_at_once())  # concurrent: the embeddings are batched
    assert observations == [local_tools.call_tool(n, a) for n, a in cases]


def test_structured_endpoints(http, engine, local_tools):
    arguments = {"query": "history of Sudan under Anglo-Egyptian rule", "top_k": 3}
    data = http.post("/search", json=arguments, headers=AUTH).json()
    assert data["content"] == local_tools.call_tool("search", json.dumps(arguments))
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    page = engine.resolve_page("Emmanuel Olisadebe")
    data = http.post("/open_url", json={"url": f"/wiki/{page}#chunk-3"}, headers=AUTH).json()
    assert (data["title"], data["chunk"], data["n_chunks"]) == ("Emmanuel Olisadebe", 3, 3)
    missing = http.post("/open_url", json={"url": "/wiki/999999999999"}, headers=AUTH)
    assert missing.status_code == 200 and missing.json()["outcome"] == "not_found"


def test_conformance_rows_over_serve(http, engine):
    """A slice of the reference-conformance table (``conformance.py``) through HAProxy and the replicas."""
    rows = conformance_rows(engine.resolve_page("Emmanuel Olisadebe"))
    for row in rows[::3]:
        check(row, send(http, row, AUTH), lambda **options: WikiTools(engine, **options))
    seeded = [http.get("/random", params={"seed": 5}, headers=AUTH).json() for _ in range(4)]
    assert all(data == seeded[0] for data in seeded)  # the same draw on either replica


def test_tools_health_info(http, serve_index, server):
    assert http.get("/tools", headers=AUTH).json() == {"tools": tool_schemas()}
    health = http.get("/health").json()  # no token needed
    assert health["status"] == "ok" and health["app"] == "sws"
    info = http.get("/info", headers=AUTH).json()
    manifest = json.loads((serve_index / "manifest.json").read_text())
    assert info["index"]["fingerprint"] == manifest["fingerprint"]
    assert info["index"]["corpus"]["chunks"] == 79 and info["index"]["keyword"]["redirects"] == 85
    assert info["index"]["embedder"]["fingerprint"] == manifest["embedder"]["fingerprint"]
    assert {"sws", "ray", "python", "mcp"} <= set(info["versions"])
    assert info["auth"] is True and info["embedding"]["batching"] is True
    assert info["replica"].startswith("SERVE_REPLICA::sws#RetrievalIngress#")
    assert info["bounds"]["max_top_k"] == 50


def test_bearer_token(http):
    for path in ("/tools", "/info"):
        assert http.get(path).status_code == 401
        assert http.get(path, headers={"authorization": "Bearer nope"}).status_code == 401
    response = http.post("/call", json={"name": "search", "arguments": "{}"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
    assert http.post("/mcp", json={}).status_code == 401


def test_foreign_host_or_origin_is_refused(http, server):
    """DNS rebinding through HAProxy and the replicas: a foreign ``Host`` (a page that pointed its name at
    127.0.0.1) or ``Origin`` (a page elsewhere) gets 403 JSON on /info, /search and MCP tools/call, even
    with the token; the loopback names at any port pass."""
    evil = {"host": "evil.example", "origin": "http://evil.example"}
    for method, path, headers, body in guarded_requests(AUTH):
        for sent, code in [(evil, "host_not_allowed"), ({"origin": evil["origin"]}, "origin_not_allowed")]:
            response = http.request(method, path, headers={**headers, **sent}, json=body)
            assert response.status_code == 403, (path, sent, response.text)
            assert response.json()["error"]["code"] == code
        local = {**headers, "host": f"localhost:{server.port}", "origin": f"http://localhost:{server.port}"}
        assert http.request(method, path, headers=local, json=body).status_code == 200, path


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "status"),
    [
        ("POST", "/call", b"{oops", "application/json", 400),
        ("POST", "/call", b"\xff\xfe", "application/json", 400),
        ("POST", "/call", b'{"name": "search"}', "text/plain", 415),
        ("POST", "/search", b"query=x", "application/x-www-form-urlencoded", 415),
        ("POST", "/call", b"x" * 70_000, "application/json", 413),
        ("GET", "/search", None, None, 405),
        ("PATCH", "/call", b"{}", "application/json", 405),
        ("GET", "/no/such/path", None, None, 404),
        ("POST", "/v1/embeddings", b"{}", "application/json", 404),
    ],
)
def test_bad_input_over_http(http, method, path, body, content_type, status):
    headers = {**AUTH, **({"content-type": content_type} if content_type else {})}
    response = http.request(method, path, content=body, headers=headers)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["status"] == status


def test_bounds_over_http(http, local_tools):
    arguments = json.dumps({"query": "x" * 5000})
    observation = json.loads(
        http.post("/call", json={"name": "search", "arguments": arguments}, headers=AUTH).json()["content"]
    )
    assert observation["status"] == "error" and "at most 4096" in observation["error"]
    data = http.post(
        "/search", json={"query": "the", "top_k": 500, "method": "keywords"}, headers=AUTH
    ).json()
    assert data["top_k"] == 50 and len(data["hits"]) <= 50
    assert data["content"] == local_tools.call_tool(
        "search", json.dumps({"query": "the", "top_k": 500, "method": "keywords"})
    )


async def _mcp_session(url: str, mode: str, token: str | None, engine):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"authorization": f"Bearer {token}"} if token else {}
    page = engine.resolve_page("Emmanuel Olisadebe")
    calls = [
        ("search", {"query": "Olisadebe Polish footballer", "top_k": 3}),
        ("search", {"query": "hotel in Canada", "method": "keywords"}),
        ("search", {"query": ""}),
        ("open_url", {"url": f"https://en.wikipedia.org/wiki/{page}#chunk-1"}),
    ]
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http_client,
        Client(streamable_http_client(f"{url}/mcp", http_client=http_client), mode=mode) as client,
    ):
        listed = await client.list_tools()
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    return listed.tools, calls, results


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026-07-28 protocol and the handshake era
def test_mcp_endpoint_with_the_mcp_client(server, engine, local_tools, mode):
    tools, calls, results = asyncio.run(_mcp_session(server.url, mode, TOKEN, engine))
    schemas = {s["function"]["name"]: s["function"] for s in tool_schemas()}
    assert [t.name for t in tools] == ["search", "open_url"]
    for tool in tools:
        assert tool.description == schemas[tool.name]["description"]
        assert tool.input_schema == schemas[tool.name]["parameters"]
    for (name, arguments), result in zip(calls, results, strict=True):
        expected = local_tools.call_tool(name, json.dumps(arguments))
        assert [c.text for c in result.content] == [expected]
        assert result.is_error == expected.startswith('{"status": "error"')


def test_mcp_without_token_is_refused(server, engine):
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own error types
        asyncio.run(_mcp_session(server.url, "legacy", None, engine))


async def _search_under_held_streams(url: str, streams: int, arguments: dict):
    """Open ``streams`` GET /mcp streams and keep them open while one POST /search runs."""
    import aiohttp

    endless = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(headers=AUTH, timeout=endless) as session:
        sse = {"accept": "text/event-stream"}
        held = await asyncio.gather(*(session.get(f"{url}/mcp", headers=sse) for _ in range(streams)))
        try:
            bounded = aiohttp.ClientTimeout(total=60)
            async with session.post(f"{url}/search", json=arguments, timeout=bounded) as response:
                return [r.status for r in held], response.status, await response.json()
        finally:
            for response in held:
                response.close()


def test_held_mcp_streams_leave_searches_answering(server, local_tools):
    """64 open GET /mcp streams: at most 16 per replica (2 here) are held, the rest get 503, and /search
    still has request slots (32 per replica) to answer in."""
    arguments = {"query": "history of Sudan under Anglo-Egyptian rule", "top_k": 3}
    statuses, status, data = asyncio.run(_search_under_held_streams(server.url, 64, arguments))
    assert set(statuses) == {200, 503} and statuses.count(200) <= 2 * 16, statuses
    assert status == 200 and data["content"] == local_tools.call_tool("search", json.dumps(arguments))


HANDLE_TASK = """
from ray import serve

@ray.remote(num_cpus=0)
def agent_task(cases):
    from sws.transport import HandleTools
    tools = HandleTools("sws")
    handle = serve.get_app_handle("sws")
    return {
        "call_tool": [tools.call_tool(name, arguments or "{}") for name, arguments in cases],
        "search": handle.search.remote({"query": "bridge in Pasadena", "top_k": 2}).result(),
        "tools": handle.tools.remote().result(),
        "random": handle.random.remote("page", 5).result(),
        "info": handle.info.remote().result()["index"]["fingerprint"],
        "retrieve": handle.retrieve.remote(["bridge in Pasadena", "history of Sudan"], topk=2).result(),
    }

print(json.dumps(ray.get(agent_task.remote(json.loads(sys.argv[1])))))
"""


def test_handle_api_from_a_ray_task(server, http, engine, local_tools, serve_index):
    cases = tool_cases(engine)
    out = run_driver(server.ready["ray_address"], HANDLE_TASK, json.dumps(cases))
    assert out["call_tool"] == [local_tools.call_tool(name, arguments) for name, arguments in cases]
    arguments = json.dumps({"query": "bridge in Pasadena", "top_k": 2})
    assert out["search"]["content"] == local_tools.call_tool("search", arguments)
    assert out["tools"] == tool_schemas()
    assert out["random"]["content"] == opened(local_tools, out["random"]["url"])
    assert out["random"]["page_id"] == engine.random_page(random.Random(5))  # the seed decides, anywhere
    assert out["info"] == json.loads((serve_index / "manifest.json").read_text())["fingerprint"]
    body = {"queries": ["bridge in Pasadena", "history of Sudan"], "topk": 2}
    assert (
        out["retrieve"] == http.post("/retrieve", json=body, headers=AUTH).json()
    )  # the same batch, by handle and over HTTP


def test_retrieve_batches_over_serve(http, engine):
    """Search-R1's batched form through the ingress and the embedding deployment: each query's hits."""
    queries = [f"{word} history" for word in ("Sudan", "bridge", "film", "river", "music", "war")] * 8
    for method in ("keywords", "rrf"):
        body = {"queries": queries, "topk": 3, "method": method}
        response = http.post("/retrieve", json=body, headers=AUTH)
        assert response.status_code == 200, response.text
        ids = [[doc["id"] for doc in docs] for docs in response.json()["result"]]
        expected = [[h.chunk.chunk_id for h in hits] for hits in engine.batch_search(queries, 3, method)]
        assert ids == expected, method


DEPLOY_TIGHT = """
from ray import serve
from serve.retrieval import build_app
settings = {"index": sys.argv[1], "app_name": "tight", "max_ongoing_requests": 1, "max_queued_requests": 2,
            "retry_after_s": 2, "mcp": False, "embedding": {"batching": False}}
serve.run(build_app(settings), name="tight", route_prefix="/tight", blocking=False)
print(json.dumps({"ok": True}))
"""
DELETE_APP = """
from ray import serve
serve.delete(sys.argv[1])
print(json.dumps({"ok": True}))
"""


# requests sent at once to the app that holds 3: on a machine busy with other work the client may open its
# connections slower than the replica answers, so a larger burst follows one that was all answered
BURSTS = (24, 96)


async def _burst(url: str, body: dict, clients: int) -> list[tuple[int, str | None, bytes]]:
    import aiohttp

    async with aiohttp.ClientSession(headers=AUTH) as session:

        async def one():
            async with session.post(url, json=body) as response:
                return response.status, response.headers.get("retry-after"), await response.read()

        return await asyncio.gather(*(one() for _ in range(clients)))


def _tight_bursts_get_503(server) -> None:
    """Bursts beyond ``tight``'s bound, through a tool call and ``/retrieve``, get 503 + Retry-After."""
    bodies = {  # a tool call, and the RL trainers' /retrieve (their retry loops retry a 503, never a 429)
        "/call": {"name": "search", "arguments": json.dumps({"query": "Sudan history", "method": "rrf"})},
        "/retrieve": {"queries": ["Sudan history", "Pasadena bridge"], "method": "rrf"},
    }
    with httpx.Client(timeout=60, trust_env=False) as client:  # an app without MCP (`sws serve --no-mcp`)
        assert client.get(f"{server.url}/tight/info", headers=AUTH).json()["mcp"] is False
        assert client.post(f"{server.url}/tight/mcp", headers=AUTH, json={}).status_code == 404
    for path, body in bodies.items():
        with httpx.Client(timeout=60, trust_env=False) as client:
            assert client.post(f"{server.url}/tight{path}", headers=AUTH, json=body).status_code == 200
        for clients in BURSTS:  # a burst whose requests reach the replica one by one never passes the bound
            outcomes = asyncio.run(_burst(f"{server.url}/tight{path}", body, clients))
            statuses = [status for status, _, _ in outcomes]
            if 503 in statuses:
                break
        assert set(statuses) == {200, 503}, (path, statuses)
        rejected = [(retry, text) for status, retry, text in outcomes if status == 503]
        assert all(retry == "2" for retry, _ in rejected)
        assert all(b"backpressure" in text for _, text in rejected)


def test_queue_then_503_with_retry_after_beyond_the_bound(server, serve_index):
    """``tight`` holds 1 request + 2 queued per replica: a burst beyond that gets 503 + Retry-After; the main
    app (32 running + 4096 queued per replica) queues a larger load without one failure. ``tight`` is deleted
    after, leaving the shared server as it was."""
    run_driver(server.ready["ray_address"], DEPLOY_TIGHT, str(serve_index))
    try:
        _tight_bursts_get_503(server)
    finally:
        run_driver(server.ready["ray_address"], DELETE_APP, "tight")
    requests = [
        ("/call", {"name": "search", "arguments": json.dumps({"query": q, "method": "rrf"})})
        for q in ("Sudan history", "Pasadena bridge", "Canadian hotel", "pneumonia care")
    ]
    # 96 clients sending at once: more requests than the 2 x 32 running slots, so some must queue; each client
    # sends 2 (ended by count, not by the clock: the same load at any speed), and every one is answered
    clients, each = 96, 2
    held = run_closed_loop(server.url, requests, clients=clients, until=per_client(each), token=TOKEN)
    assert len(held) == clients * each and all(a.ok for a in held), summary(held)


@pytest.mark.slow
def test_python_proxy_ingress_without_batching(proxy_server, engine, local_tools):
    """The other ingress mode (Serve's Python proxy) and in-replica query embeddings: same text."""
    info = httpx.get(f"{proxy_server.url}/info", timeout=60).json()
    assert info["auth"] is False and info["embedding"]["batching"] is False and info["mcp"] is True
    tools = HttpTools(proxy_server.url, policy=RetryPolicy(timeout_s=60))
    for name, arguments in tool_cases(engine)[::2]:
        assert tools.call_tool(name, arguments or "{}") == local_tools.call_tool(name, arguments)
    response = httpx.post(
        f"{proxy_server.url}/call", content=b"{", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_json"


DEPLOY_BROKEN = """
from ray import serve
from serve.launch import deploy, wait_running

@serve.deployment
class Broken:
    def __init__(self):
        raise ValueError("the index folder went away")

raised = {}
deploy(Broken.bind(), "broken", "/broken")
for name, timeout_s in (("broken", 300), ("absent", 0.0)):
    try:
        wait_running({name: timeout_s})
    except (RuntimeError, TimeoutError) as exc:
        raised[name] = f"{type(exc).__name__}: {exc}"
serve.delete("broken")
print(json.dumps(raised))
"""


def test_an_app_that_cannot_start_is_a_loud_failure_beside_a_running_one(server, http):
    """``sws serve`` deploys its apps without waiting, then waits for each: a replica whose constructor raises
    ends the wait with Serve's reason (``sws serve`` then exits non-zero), one never deployed times out."""
    raised = run_driver(server.ready["ray_address"], DEPLOY_BROKEN, timeout_s=400)
    assert raised["broken"].startswith("RuntimeError: deploying application 'broken' failed")
    assert "the index folder went away" in raised["broken"]
    assert raised["absent"] == "TimeoutError: application 'absent' not running after 0 s"
    assert http.get("/health", headers=AUTH).status_code == 200  # the running app is left alone
